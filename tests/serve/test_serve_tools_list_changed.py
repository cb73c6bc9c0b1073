"""serve follows a backend's notifications/tools/list_changed as wrap's clients do: it lists the tools
again, so a tool added later can be called and a removed one is no longer offered (nor called)."""

from __future__ import annotations

import sys
from pathlib import Path

from serve_api import api, serve_in_process, write_token

from rawclient import wait_for

BACKEND = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "changing_backend.py")]


def _tools(url: str, token: str) -> list[str]:
    status, listing = api(url, token, "/v1/servers")
    assert status == 200
    return [tool["name"] for tool in listing["servers"][0]["tools"]]


def test_serve_lists_the_tools_again_when_the_backend_says_they_changed(tmp_path: Path) -> None:
    token = write_token(tmp_path / "token")
    with serve_in_process(
        "--recovery-dir", str(tmp_path / "rec"), "--listen", "127.0.0.1:0", "--token-file", str(tmp_path / "token"),
        "-n", "changing", "--", *BACKEND,
    ) as url:  # fmt: skip
        assert _tools(url, token) == ["grow", "tool_1"]
        status, _ = api(
            url, token, "/v1/call", {"server": "changing", "tool": "grow", "arguments": {"to": 3}}
        )
        assert status == 200
        wait_for(lambda: _tools(url, token) == ["grow", "tool_1", "tool_2", "tool_3"], 10, "the new listing")
        call = {"server": "changing", "tool": "tool_3", "arguments": {"n": 1}}
        status, answer = api(url, token, "/v1/call", call)
        assert status == 200 and "tool_3" in answer["result"]["content"][0]["text"]
        api(url, token, "/v1/call", {"server": "changing", "tool": "grow", "arguments": {"to": 1}})
        wait_for(lambda: _tools(url, token) == ["grow", "tool_1"], 10, "the shorter listing")
        status, refused = api(url, token, "/v1/call", call)
        assert status == 404 and refused["error"]["code"] == "unknown_tool"
