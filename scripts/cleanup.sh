#!/bin/sh
# Retention cleanup of a recovery directory, for cron (host crontab, image/crontab, a Kubernetes CronJob).
#
#   cleanup.sh [DIR] [MAX_AGE] [MAX_BYTES]        defaults: /recovery 24h (no size cap)
#
# Runs `mcpsqueeze clean DIR --max-age MAX_AGE [--max-bytes MAX_BYTES] --json`, which deletes only
# mcpsqueeze's own recovery files, directly in DIR, never following symlinks. Run it as the user that
# owns DIR (uid 10001 in the image): `clean` refuses a directory owned by anybody else, root included.
#
# Overlapping runs: one run at a time per DIR (flock when available, else an atomic mkdir lock with a
# stale-lock check). A run that finds the lock held logs `result=skipped` and exits 0: the holder is
# doing the same work, and a busy directory is not an alarm.
#
# Output: exactly one line per run on stdout, for logs and monitors:
#   2026-01-01T03:17:00Z mcpsqueeze-cleanup dir=/recovery result=ok deleted=3 freed_bytes=729344 kept=12 kept_bytes=2150400 exit=0
# `clean`'s own error messages, if any, go to stderr.
#
# Exit codes: 0 ok (or skipped because another run holds the lock) · 1 some files could not be
# deleted (see stderr) · 2 usage error or the directory was refused (symlink, wrong owner, group/world
# writable, missing) · 3 mcpsqueeze not found or failed unexpectedly.
#
# Environment: MCPSQUEEZE_BIN (default: mcpsqueeze on PATH), MCPSQUEEZE_LOCK_DIR (default: a private
# directory under ${TMPDIR:-/tmp}; works on a read-only root with a tmpfs /tmp).
set -u
umask 077

dir=${1:-/recovery}
max_age=${2:-24h}
max_bytes=${3:-}
bin=${MCPSQUEEZE_BIN:-mcpsqueeze}

now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
report() { # result exit [extra fields]
    printf '%s mcpsqueeze-cleanup dir=%s result=%s %sexit=%s\n' "$(now)" "$dir" "$1" "${3:-}" "$2"
}

if [ "$#" -gt 3 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
    echo "usage: cleanup.sh [DIR] [MAX_AGE] [MAX_BYTES]   (defaults: /recovery 24h, no size cap)" >&2
    [ "$#" -gt 3 ] && exit 2
    exit 0
fi
if ! command -v "$bin" >/dev/null 2>&1; then
    echo "cleanup.sh: '$bin' not found; put mcpsqueeze on PATH or set MCPSQUEEZE_BIN." >&2
    report error 3
    exit 3
fi

# --- lock ----------------------------------------------------------------------------------------
# The lock lives in a directory of our own (0700, not a symlink), so another user cannot pre-plant
# the lock file or point it somewhere else.
lock_root=${MCPSQUEEZE_LOCK_DIR:-${TMPDIR:-/tmp}/mcpsqueeze-cleanup-$(id -u)}
mkdir -m 0700 "$lock_root" 2>/dev/null
if [ -L "$lock_root" ] || [ ! -d "$lock_root" ] || [ ! -O "$lock_root" ]; then
    echo "cleanup.sh: lock directory $lock_root is not a directory of ours; set MCPSQUEEZE_LOCK_DIR." >&2
    report error 2
    exit 2
fi
lock_key=$(printf '%s' "$dir" | cksum | cut -d' ' -f1)
lock=$lock_root/$lock_key.lock

# shellcheck disable=SC2317 # called from the traps
release() { :; }
if command -v flock >/dev/null 2>&1; then
    exec 9>>"$lock"
    if ! flock -n 9; then
        report skipped 0 "reason=locked "
        exit 0
    fi
else
    # mkdir is atomic; the pid inside lets the next run break a lock whose holder died.
    if ! mkdir "$lock.d" 2>/dev/null; then
        holder=$(cat "$lock.d/pid" 2>/dev/null || true)
        if [ -n "$holder" ] && kill -0 "$holder" 2>/dev/null; then
            report skipped 0 "reason=locked "
            exit 0
        fi
        # Stale (holder gone, or it died before writing its pid): take it over once.
        rm -rf "$lock.d"
        if ! mkdir "$lock.d" 2>/dev/null; then
            report skipped 0 "reason=locked "
            exit 0
        fi
    fi
    echo "$$" >"$lock.d/pid"
    # shellcheck disable=SC2317
    release() { rm -rf "$lock.d"; }
fi
trap 'release' EXIT
trap 'release; exit 130' INT TERM HUP

# --- run -----------------------------------------------------------------------------------------
if [ -n "$max_bytes" ]; then
    out=$("$bin" clean "$dir" --max-age "$max_age" --max-bytes "$max_bytes" --json)
else
    out=$("$bin" clean "$dir" --max-age "$max_age" --json)
fi
code=$?

# The JSON is one line from json.dumps; the deleted names match mcpsqueeze's own pattern only.
num() { printf '%s\n' "$out" | sed -n "s/.*\"$1\": *\([0-9][0-9]*\).*/\1/p" | head -n 1; }
deleted=$(printf '%s\n' "$out" | sed -n 's/.*"deleted": *\[\([^]]*\)\].*/\1/p' \
    | grep -o 'mcpsqueeze-[0-9a-f]\{32\}' | wc -l | tr -d ' ')
freed=$(num bytes_freed)
kept=$(num kept)
kept_bytes=$(num kept_bytes)

case $code in
    0) result=ok ;;
    1) result=errors ;;
    2) result=refused ;;
    *) result=error; code=3 ;;
esac
if [ -z "$freed" ]; then
    report "$result" "$code"
else
    report "$result" "$code" "deleted=${deleted:-0} freed_bytes=$freed kept=${kept:-0} kept_bytes=${kept_bytes:-0} "
fi
exit "$code"
