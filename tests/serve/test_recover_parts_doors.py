"""Several line ranges, pointers and ids in one recovery through every door: wrap's
`squeeze_recover`, serve's `GET /v1/recover`, `mcpsq recover` and `Client.recover`; the parts come back
in order, exact, joining into the original's lines byte for byte."""

from __future__ import annotations

import json
import os
import sys
import urllib.parse
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from serve_api import api, serve_in_process, write_token

from mcpsqueeze import Client
from mcpsqueeze._lines import split_lines
from memwrap import mcpsq
from rawclient import RawClient, demo_server

READ = {"path": "notes.md"}
SPEC = "3-5,1-2,40-"
DEMO = {"demo": {"command": sys.executable, "args": ["-m", "mcpsqueeze.demo.server"]}}


def _expected(text: str) -> list[str]:
    lines = split_lines(text)
    return ["".join(lines[2:5]), "".join(lines[0:2]), "".join(lines[39:])]


def _parts(result: dict[str, Any]) -> list[str]:
    return [result["content"][p["block"]]["text"] for p in result["_meta"]["mcpsqueeze/parts"]]


def test_wrap_answers_several_ranges_and_ids_in_one_call(
    tmp_path: Path, wrap_door: Callable[..., AbstractContextManager[RawClient]]
) -> None:
    with wrap_door(["--recovery-dir", str(tmp_path / "rec"), "--page-size", "100000000"]) as client:
        client.initialize()
        one = client.call("read_file", READ)["_meta"]["truncation"]["response_id"]
        two = client.call("search_issues", {"query": "x", "limit": 100})["_meta"]["truncation"]["response_id"]
        text = client.call("squeeze_recover", {"response_id": one})["content"][0]["text"]
        ranges = client.call("squeeze_recover", {"response_id": one, "lines": SPEC})
        both = client.call("squeeze_recover", {"response_id": [one, two], "lines": "1-2"})
        issues = client.call(
            "squeeze_recover", {"response_id": two, "pointer": ["/issues/1/key", "/total_count"]}
        )
    assert _parts(ranges) == _expected(text)
    assert _parts(both)[0] == "".join(split_lines(text)[:2]) and len(_parts(both)) == 2
    assert [p["response_id"] for p in both["_meta"]["mcpsqueeze/parts"]] == [one, two]
    assert len(_parts(issues)) == 2 and _parts(issues)[0] == "DEMO-1001"


def test_serve_mcpsq_and_client_answer_several_ranges_in_order(tmp_path: Path) -> None:
    token = write_token(tmp_path / "token")
    rec = tmp_path / "rec"
    with serve_in_process(
        "--recovery-dir", str(rec), "--budget", "2000", "--listen", "127.0.0.1:0",
        "--token-file", str(tmp_path / "token"), "-n", "demo", "--", *demo_server(),
    ) as url:  # fmt: skip
        status, first = api(
            url, token, "/v1/call", {"server": "demo", "tool": "read_file", "arguments": READ}
        )
        assert status == 200 and first["action"] == "shrink", first
        rid = first["response_id"]
        text = json.loads(Path(first["original_response_file"]).read_text())["content"][0]["text"]
        status, got = api(url, token, f"/v1/recover/{rid}?lines={urllib.parse.quote(SPEC)}")
        assert status == 200, got
        assert _parts(got["result"]) == _expected(text)
        status, twice = api(url, token, f"/v1/recover/{rid}?lines=1-2&response_id={rid}")
        assert status == 200 and len(_parts(twice["result"])) == 2
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    env |= {"MCPSQUEEZE_RECOVERY_DIR": str(rec), "MCPSQUEEZE_SOCKET": str(tmp_path / "none.sock")}
    done = mcpsq(["recover", rid, "--lines", SPEC], env)
    assert done.returncode == 0 and done.out == "".join(_expected(text)).encode()
    assert "3 parts" in done.stderr
    with Client(DEMO, budget=2000) as client:
        shrunk = client.call("demo", "read_file", READ)
        cid = shrunk["_meta"]["truncation"]["response_id"]
        assert client.recover(cid, lines=SPEC) == "".join(_expected(client.recover(cid)))
