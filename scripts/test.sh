#!/usr/bin/env bash
# The whole test suite on a fresh machine: `bash scripts/test.sh [PYTEST ARGS...]`.
#
# 1. a virtualenv in .venv with the project and its test extras (reused when present),
# 2. the real public MCP servers and the conformance suite from npm/PyPI (scripts/install-test-deps.sh),
# 3. a Docker engine, the base image and the project image for the container tests (scripts/ci-docker.sh);
#    when Docker cannot be had outside CI the container tests are skipped; on CI (CI=true) they fail,
# 4. pytest on MCPSQUEEZE_TEST_WORKERS xdist workers (default 4: most tests wait on subprocesses and sockets,
#    so 4 workers keep 2 cores busy), whole files per worker (--dist loadfile: a module's shared server
#    starts once, and the container tests build their image once). `-n 0` in the arguments runs serially.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
if ! .venv/bin/python -c "import mcpsqueeze, pytest, xdist, re2, hypothesis, testcontainers, just_bash, redis" 2>/dev/null; then
    .venv/bin/pip install --quiet --upgrade pip
    .venv/bin/pip install --quiet -e '.[test,just-bash,redis]'
fi
export PATH="$root/.venv/bin:$PATH"
export VIRTUAL_ENV="$root/.venv"

bash scripts/install-test-deps.sh --python >/dev/null

if [ -n "${CI:-}" ] || [ "$(id -u)" = 0 ]; then
    if sh scripts/ci-docker.sh mcpsqueeze:test; then
        export MCPSQUEEZE_TEST_IMAGE=mcpsqueeze:test  # the container tests reuse this image
    else
        if [ -n "${CI:-}" ]; then
            echo "test.sh: Docker is required on CI for the container tests" >&2
            exit 1
        fi
        echo "test.sh: no Docker engine; container tests will be skipped" >&2
    fi
fi

# The caller's own -n/--dist come later on the line and win.
exec .venv/bin/python -m pytest -n "${MCPSQUEEZE_TEST_WORKERS:-4}" --dist loadfile "$@"
