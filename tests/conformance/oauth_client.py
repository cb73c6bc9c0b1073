"""Client command for `conformance client --suite auth`: our OAuth backend client, end to end.

    python tests/conformance/oauth_client.py SERVER_URL

Logs in headlessly (`mcpsqueeze auth login --fetch-authorize-url`, the suite's authorization server
approves at once), then runs `mcpsqueeze wrap -- SERVER_URL` over stdio: initialize, tools/list, and a
call of the first tool. Exit 0 when every step answered. Not a test module (no test_ prefix).

As a user would configure it: our client ID metadata document URL is the suite's
(https://conformance-test.local/client-metadata.json; used only where the authorization server
advertises CIMD), and the pre-registered client_id/client_secret the suite hands over in
MCP_CONFORMANCE_CONTEXT become --oauth-client-id and a 0600 --oauth-client-secret-file. A server that
asks for OAuth only after initialize (login says it did not ask) is left to the proxy itself:
`wrap --oauth-login fetch` authorizes in place, scope step-ups included.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

CIMD_URL = "https://conformance-test.local/client-metadata.json"


def client_flags(tmp: str) -> list[str]:
    flags = ["--oauth-client-metadata-url", CIMD_URL]
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if context.get("client_id"):
        flags += ["--oauth-client-id", context["client_id"]]
    if context.get("client_secret"):
        secret = os.path.join(tmp, "client-secret")
        fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(context["client_secret"])
        flags += ["--oauth-client-secret-file", secret]
    return flags


def main() -> int:
    url = sys.argv[-1]
    cli = [sys.executable, "-m", "mcpsqueeze.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MCPSQUEEZE_OAUTH_DIR": os.path.join(tmp, "oauth")}
        flags = client_flags(tmp)
        login = subprocess.run(
            [*cli, "auth", "login", "--fetch-authorize-url", *flags, url],
            env=env,
            timeout=60,
            stderr=subprocess.PIPE,
            text=True,
        )
        sys.stderr.write(login.stderr)
        if login.returncode == 0:
            flags += ["--oauth-login", "never"]  # the stored login must be enough
        elif "did not ask for OAuth" in login.stderr:
            flags += ["--oauth-login", "fetch"]  # the server asks later: the proxy authorizes itself
        else:
            return login.returncode
        proc = subprocess.Popen(
            [*cli, "wrap", "--recovery-dir", os.path.join(tmp, "rec"), *flags, "--", url],
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
