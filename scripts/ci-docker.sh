#!/bin/sh
# The Docker part of CI, idempotent: make sure an engine runs, then build the image from this checkout.
#
#   scripts/ci-docker.sh [IMAGE]          (default mcpsqueeze:test)
#
# 1. installs Debian's docker.io if no `dockerd` is installed (apt-get; needs root),
# 2. starts dockerd if `docker info` fails, and waits for it (deadline $DOCKERD_TIMEOUT, default 60 s),
# 3. builds the base image from Debian packages, reusing it when present (scripts/build-base-image.sh),
# 4. builds the project's wheel and all dependency wheels into dist/ on the host (pip inside
#    `docker build` cannot reach PyPI),
# 5. builds the image with the classic builder, without network.
# Prints the time each step took. Environment: BASE_IMAGE (default mcpsqueeze-base:bookworm; set it
# to a pullable image such as python:3.11-slim to skip step 3), PYTHON (default: python3 of the
# active venv), DOCKERD_LOG (default /var/log/mcpsqueeze-dockerd.log).
set -eu

image=${1:-mcpsqueeze:test}
base=${BASE_IMAGE:-mcpsqueeze-base:bookworm}
python=${PYTHON:-${VIRTUAL_ENV:+$VIRTUAL_ENV/bin/}python3}
deadline=${DOCKERD_TIMEOUT:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

log() { printf '%s ci-docker: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
t0=$(date +%s)
step_start=$t0
step() { # name: report the previous step's duration and start a new one
    now=$(date +%s)
    [ -n "${step_name:-}" ] && log "$step_name took $((now - step_start))s"
    step_name=$1
    step_start=$now
}

step "docker engine install"
if ! command -v dockerd >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        log "dockerd is not installed and this is not root; install Debian's docker.io first."
        exit 1
    fi
    log "installing docker.io"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io >/dev/null
fi

step "docker engine start"
if ! docker info >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        log "no Docker engine answers and this is not root; start dockerd first."
        exit 1
    fi
    dlog=${DOCKERD_LOG:-/var/log/mcpsqueeze-dockerd.log}
    log "starting dockerd (log: $dlog)"
    # Detached from this script's process group so that it outlives CI steps that run after us.
    if command -v setsid >/dev/null 2>&1; then
        setsid dockerd >>"$dlog" 2>&1 </dev/null &
    else
        nohup dockerd >>"$dlog" 2>&1 </dev/null &
    fi
    end=$(($(date +%s) + deadline))
    until docker info >/dev/null 2>&1; do
        if [ "$(date +%s)" -ge "$end" ]; then
            log "dockerd did not answer within ${deadline}s; last log lines:"
            tail -n 20 "$dlog" >&2 || true
            exit 1
        fi
        sleep 0.5
    done
fi

step "base image"
if [ "$base" = mcpsqueeze-base:bookworm ] || [ -n "${BUILD_BASE:-}" ]; then
    sh scripts/build-base-image.sh "$base"
fi

step "wheels"
# Dependency wheels are built for the host's Python: it must be the image's (cp311 on bookworm).
host_py=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
image_py=$(docker run --rm --network none --entrypoint python3 "$base" \
    -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
if [ -n "$image_py" ] && [ "$host_py" != "$image_py" ]; then
    log "the wheels would be built with Python $host_py but $base has Python $image_py;"
    log "set PYTHON to a python$image_py interpreter."
    exit 1
fi
# A clean build: setuptools' build/ would otherwise carry modules deleted from src/ into the wheel.
rm -rf build dist/*.whl
pip_log=$(mktemp)
if ! "$python" -m pip wheel --quiet --disable-pip-version-check --wheel-dir dist . >"$pip_log" 2>&1; then
    cat "$pip_log" >&2
    rm -f "$pip_log"
    log "pip wheel failed"
    exit 1
fi
# This machine's pip config lists local indexes that lack some projects; those warnings are noise.
grep -v "is ignored: it is neither a file nor a directory" "$pip_log" >&2 || true
rm -f "$pip_log"

step "image build"
previous=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
DOCKER_BUILDKIT=0 docker build --quiet --network none --force-rm --pull=false \
    --build-arg BASE_IMAGE="$base" -f Containerfile -t "$image" . >/dev/null
# The build stage stays behind as an untagged image; drop it (and only it).
docker image prune --force --filter label=org.mcpsqueeze.stage=build >/dev/null
# The image this tag named before is now untagged: remove it unless a container still uses it.
current=$(docker image inspect --format '{{.Id}}' "$image")
if [ -n "$previous" ] && [ "$previous" != "$current" ]; then
    docker image rm "$previous" >/dev/null 2>&1 || true
fi

step "done"
log "image $image ready in $(($(date +%s) - t0))s total"
