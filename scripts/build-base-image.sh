#!/bin/sh
# Build the local base image used on CI: a minimal Debian bookworm with Python, made from Debian's own
# packages, because no container registry is reachable there (FROM python:... cannot be pulled).
#
#   scripts/build-base-image.sh [NAME]            (default mcpsqueeze-base:bookworm)
#
# Reuses NAME when it already exists. Otherwise installs mmdebstrap if missing, bootstraps
# `--variant=essential` with python3, python3-venv, ca-certificates, passwd, jq (agents and tests read
# recovery files with it) and tini (PID 1: forwards signals, reaps zombies), from the apt mirror this
# machine is configured with, and pipes the root filesystem tar into `docker import`.
#
# Environment: MCPSQUEEZE_DEBIAN_MIRROR overrides the mirror (a URL, or several sources.list lines
# separated by newlines); MCPSQUEEZE_BASE_EXTRA_PACKAGES adds packages (comma separated).
set -eu

name=${1:-mcpsqueeze-base:bookworm}
suite=bookworm
packages="python3,python3-venv,ca-certificates,passwd,jq,tini${MCPSQUEEZE_BASE_EXTRA_PACKAGES:+,$MCPSQUEEZE_BASE_EXTRA_PACKAGES}"

log() { printf '%s build-base-image: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >&2; }

if docker image inspect "$name" >/dev/null 2>&1; then
    log "reusing existing image $name"
    exit 0
fi

# One sources.list line per (URI, suite) of the host's Debian sources, deb822 or one-line format.
host_sources() {
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && uris != "" && suites != "") {
                    nu = split(uris, u, " "); ns = split(suites, s, " ")
                    for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
                        if (s[j] ~ /^bookworm/) print "deb " u[i] " " s[j] " main"
                }
                types = ""; uris = ""; suites = ""
            }
            /^[ \t]*$/ { flush(); next }
            /^Types:/  { sub(/^Types:[ \t]*/, "");  types = $0 }
            /^URIs:/   { sub(/^URIs:[ \t]*/, "");   uris = $0 }
            /^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
            END { flush() }
        ' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk '$1 == "deb" && $3 ~ /^bookworm/ { print "deb " $2 " " $3 " main" }' "$f"
    done
}

mirror=${MCPSQUEEZE_DEBIAN_MIRROR:-$(host_sources)}
if [ -z "$mirror" ]; then
    log "no Debian bookworm source found in /etc/apt; set MCPSQUEEZE_DEBIAN_MIRROR to a mirror URL"
    exit 1
fi

if ! command -v mmdebstrap >/dev/null 2>&1; then
    log "installing mmdebstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap >/dev/null 2>&1 || {
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap >/dev/null
    }
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpsqueeze-base.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
tar=$tmp/rootfs.tar
start=$(date +%s)
log "bootstrapping $suite ($packages) from: $(printf '%s' "$mirror" | tr '\n' ';')"
# mmdebstrap takes each argument after the suite/target as one sources.list entry (or a bare URL).
# Check-Valid-Until is off because CI mirrors are often frozen snapshots.
set -f
oldifs=$IFS
IFS='
'
# shellcheck disable=SC2086
mmdebstrap --quiet --variant=essential --include="$packages" \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    "$suite" "$tar" $mirror
IFS=$oldifs
set +f
log "bootstrapped in $(($(date +%s) - start))s; importing"
# A separate file rather than a pipe: POSIX sh has no pipefail, and a half-written tar must never
# become an image that later runs would reuse.
docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/bin/sh"]' \
    "$tar" "$name" >/dev/null
log "built $name in $(($(date +%s) - start))s"
