#!/bin/sh
# Container entrypoint: start the mcpsqueeze session proxy and keep `docker stop` clean.
#
#   (no arguments) or options   runs `mcpsqueeze serve --config ... --recovery-dir ... --socket ...
#                               --retention ... [options]`
#   any other command           runs that command instead (e.g. `mcpsqueeze-cleanup`, `sh`)
#
# - PID 1: re-executes itself under tini when the image has it (Debian base) and nothing else is PID 1
#   (`docker run --init` makes docker-init PID 1 instead). Without tini this shell stays PID 1.
#   Either way this shell forwards TERM/INT/HUP to `serve`, waits for it, and exits with its status:
#   serve exits 0 after printing its summary on SIGTERM, so `docker stop` ends with exit code 0.
# - umask 077: everything the proxy creates (recovery files, socket) is private to uid 10001.
# - Read-only root: the socket directory /run/mcpsqueeze is a symlink to /tmp/mcpsqueeze, so only /tmp
#   needs to be writable (`--read-only --tmpfs /tmp`).
# - Per-server commands (`demo search-issues --query x`): one symlink per server of the config in
#   /run/mcpsqueeze/bin (last on PATH, also for `docker exec` shells), pointing at the generic
#   entry point /usr/local/lib/mcpsqueeze/server-command (written at build time by install_commands,
#   it runs the shim with the name it was called by as the server). Symlinks, not scripts: Docker mounts
#   --tmpfs noexec, and the kernel checks noexec on the link's target, which is on the root filesystem.
#
# Environment (all optional): MCPSQUEEZE_CONFIG, MCPSQUEEZE_RECOVERY_DIR, MCPSQUEEZE_SOCKET,
# MCPSQUEEZE_RETENTION (default 24h), MCPSQUEEZE_NO_TINI=1 to keep this shell as PID 1.
set -eu
umask 077

if [ "$$" = 1 ] && [ -z "${MCPSQUEEZE_NO_TINI:-}" ] && command -v tini >/dev/null 2>&1; then
    exec tini -- "$0" "$@"
fi

case ${1:-} in
    "" | -*) ;;
    *) exec "$@" ;;
esac

say() { printf 'mcpsqueeze-entrypoint: %s\n' "$*" >&2; }

config=${MCPSQUEEZE_CONFIG:-/etc/mcpsqueeze/servers.json}
recovery=${MCPSQUEEZE_RECOVERY_DIR:-/recovery}
socket=${MCPSQUEEZE_SOCKET:-/run/mcpsqueeze/session.sock}
retention=${MCPSQUEEZE_RETENTION:-24h}
dispatcher=/usr/local/lib/mcpsqueeze/server-command

if [ ! -r "$config" ]; then
    say "cannot read the servers config $config; mount one (-v ./servers.json:$config:ro) or set MCPSQUEEZE_CONFIG."
    exit 2
fi
# serve checks the directory itself (0700, ours, not a symlink) and creates it when only its parent
# exists (e.g. MCPSQUEEZE_RECOVERY_DIR=/data/recovery on a Kubernetes volume); this is the early hint.
if { [ -e "$recovery" ] && [ ! -w "$recovery" ]; } || { [ ! -e "$recovery" ] && [ ! -w "$(dirname "$recovery")" ]; }; then
    say "the recovery directory $recovery is not writable by uid $(id -u)."
    say "on the host: install -d -m 0700 -o $(id -u) -g $(id -g) DIR, then run with -v DIR:$recovery"
    exit 2
fi

# The socket's directory may be a symlink into /tmp (read-only root); give serve the real path so its
# private-directory checks see a real 0700 directory. Clients keep using $MCPSQUEEZE_SOCKET.
runtime=$(dirname "$socket")
real_runtime=$(readlink -f "$runtime" 2>/dev/null || printf '%s' "$runtime")
# shellcheck disable=SC2174 # only the last component is ours to create; its parent is /tmp or /run
if ! mkdir -p -m 0700 "$real_runtime" 2>/dev/null || [ ! -w "$real_runtime" ]; then
    say "cannot create $real_runtime for the session socket; on a read-only root add --tmpfs /tmp."
    exit 2
fi
chmod 0700 "$real_runtime"
real_socket=$real_runtime/$(basename "$socket")
bindir=$real_runtime/bin

# One command per server. A restart with another config must not keep stale links.
mkdir -m 0700 "$bindir" 2>/dev/null || [ -d "$bindir" ]
find "$bindir" -mindepth 1 -maxdepth 1 -type l -exec rm -f {} + 2>/dev/null || true
if servers=$(python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["mcpServers"]))' \
    "$config" 2>/dev/null); then
    oldifs=$IFS
    IFS='
'
    set -f
    for name in $servers; do
        case $name in
            *[!A-Za-z0-9._-]* | .* | -*)
                say "server '$name' has no command of its own (not a plain name); use: mcpsq '$name' TOOL"
                continue
                ;;
        esac
        if command -v "$name" >/dev/null 2>&1; then
            say "server '$name' has no command of its own ('$name' is already a command); use: mcpsq $name TOOL"
            continue
        fi
        ln -s "$dispatcher" "$bindir/$name"
    done
    set +f
    IFS=$oldifs
else
    say "could not read the server names from $config; the per-server commands are missing (use mcpsq SERVER TOOL)."
fi

mcpsqueeze serve --config "$config" --recovery-dir "$recovery" --socket "$real_socket" \
    --retention "$retention" "$@" &
child=$!

# shellcheck disable=SC2317 # called from the traps
forward() { kill "-$1" "$child" 2>/dev/null || true; }
trap 'forward TERM' TERM
trap 'forward INT' INT
trap 'forward HUP' HUP

# `wait` returns early when a trapped signal arrives; keep waiting until serve itself has exited.
status=0
while :; do
    if wait "$child"; then status=0; else status=$?; fi
    kill -0 "$child" 2>/dev/null || break
done
exit "$status"
