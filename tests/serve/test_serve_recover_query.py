"""serve's session API answers /v1/recover/<id>?query=EXPR with the JMESPath projection of the original."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from rawclient import cli, free_port


def _api(port: int, token: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=data, method="POST" if data else "GET"
    )
    request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_recover_with_a_query_returns_the_projection_and_a_bad_query_is_400(tmp_path: Path) -> None:
    token = secrets.token_hex(32)
    token_file = tmp_path / "token"
    token_file.write_text(token)
    token_file.chmod(0o600)
    port = free_port()
    argv = cli(
        "serve", "--recovery-dir", str(tmp_path / "rec"), "--budget", "2000", "--listen", f"127.0.0.1:{port}",
        "--token-file", str(token_file), "-n", "demo", "--", sys.executable, "-m", "mcpsqueeze.demo.server",
    )  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    try:
        seen = ""
        while "session ready on" not in seen:
            line = proc.stderr.readline()
            assert line, seen
            seen += line
        call = {"server": "demo", "tool": "search_issues", "arguments": {"query": "bug", "limit": 30}}
        status, first = _api(port, token, "/v1/call", call)
        assert status == 200 and first["action"] == "shrink", first
        rid = first["response_id"]
        query = urllib.parse.quote("issues[].key")
        status, keys = _api(port, token, f"/v1/recover/{rid}?query={query}")
        assert status == 200
        assert json.loads(keys["result"]["content"][0]["text"]) == [f"DEMO-{1000 + i}" for i in range(30)]
        status, bad = _api(port, token, f"/v1/recover/{rid}?query={urllib.parse.quote('issues[')}")
        assert status == 400 and "not valid JMESPath" in bad["error"]["message"]
    finally:
        proc.terminate()
        proc.wait(timeout=20)
