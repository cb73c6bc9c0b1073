"""serve's session API answers /v1/recover/<id>?query=EXPR with the JMESPath projection of the original."""

from __future__ import annotations

import json
import sys
import urllib.parse
from pathlib import Path

from serve_api import api, serve_in_process, write_token


def test_recover_with_a_query_returns_the_projection_and_a_bad_query_is_400(tmp_path: Path) -> None:
    token = write_token(tmp_path / "token")
    with serve_in_process(
        "--recovery-dir", str(tmp_path / "rec"), "--budget", "2000", "--listen", "127.0.0.1:0",
        "--token-file", str(tmp_path / "token"), "-n", "demo", "--", sys.executable, "-m", "mcpsqueeze.demo.server",
    ) as url:  # fmt: skip
        call = {"server": "demo", "tool": "search_issues", "arguments": {"query": "bug", "limit": 30}}
        status, first = api(url, token, "/v1/call", call)
        assert status == 200 and first["action"] == "shrink", first
        rid = first["response_id"]
        query = urllib.parse.quote("issues[].key")
        status, keys = api(url, token, f"/v1/recover/{rid}?query={query}")
        assert status == 200
        assert json.loads(keys["result"]["content"][0]["text"]) == [f"DEMO-{1000 + i}" for i in range(30)]
        status, bad = api(url, token, f"/v1/recover/{rid}?query={urllib.parse.quote('issues[')}")
        assert status == 400 and "not valid JMESPath" in bad["error"]["message"]
