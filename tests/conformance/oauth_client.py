"""Client command for `conformance client --suite auth`: our OAuth backend client, end to end.

    python tests/conformance/oauth_client.py SERVER_URL

Logs in headlessly (`mcpsqueeze auth login --fetch-authorize-url`, the suite's authorization server
approves at once), then runs `mcpsqueeze wrap -- SERVER_URL` over stdio: initialize, tools/list, and a
call of the first tool. Exit 0 when every step answered. Not a test module (no test_ prefix).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile


def main() -> int:
    url = sys.argv[-1]
    cli = [sys.executable, "-m", "mcpsqueeze.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MCPSQUEEZE_OAUTH_DIR": os.path.join(tmp, "oauth")}
        login = subprocess.run([*cli, "auth", "login", "--fetch-authorize-url", url], env=env, timeout=60)
        if login.returncode != 0:
            return login.returncode
        proc = subprocess.Popen(
            [*cli, "wrap", "--recovery-dir", os.path.join(tmp, "rec"), "--", url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None

        def request(rid: int, method: str, params: dict[str, object]) -> dict[str, object]:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(
                json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n"
            )
            proc.stdin.flush()
            while True:
                line = proc.stdout.readline()
                if not line:
                    raise SystemExit(f"the proxy ended before answering {method}")
                message = json.loads(line)
                if message.get("id") == rid and "method" not in message:
                    return dict(message)

        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "oauth-client", "version": "1"},
        }
        answer = request(1, "initialize", init)
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        proc.stdin.flush()
        tools = request(2, "tools/list", {})
        listed = (tools.get("result") or {}).get("tools") or []  # type: ignore[union-attr]
        real = [t for t in listed if t.get("name") != "squeeze_recover"]
        if real:
            request(3, "tools/call", {"name": real[0]["name"], "arguments": {}})
        proc.stdin.close()
        code = proc.wait(30)
        return 0 if "result" in answer and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
