"""grep and search through the Python doors: `Client.recover`, `Squeezer.recover`, and Code Mode's
generated Python `squeeze_recover`, which asks serve's HTTP API (`GET /v1/recover/<id>?grep=...`) on the
Client's private socket (its TypeScript: tests/codemode/test_code_mode.py). Each answers what the core
answers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpsqueeze import Client, Squeezer, UsageError
from mcpsqueeze.core._search import grep
from memwrap import generated_modules

DEMO = {"demo": {"command": sys.executable, "args": ["-m", "mcpsqueeze.demo.server"]}}


def test_client_squeezer_and_code_mode_grep_and_search_answer_as_the_core_does(tmp_path: Path) -> None:
    with Client(DEMO, budget=3000, config=False) as client:
        shrunk = client.call("demo", "read_file", {"path": "doors.txt"})
        rid = shrunk["_meta"]["truncation"]["response_id"]
        original = client.recover(rid)
        expected = grep(original, "proxy", ignore_case=True, context=1, skip=3).text
        assert client.recover(rid, grep="proxy", ignore_case=True, context=1, skip=3) == expected
        searched = client.recover(rid, search="proxy cache", context=0)
        assert searched.split("\n", 1)[0].endswith("best first (N: a match, N- context):")
        with pytest.raises(UsageError, match="lookaround"):
            client.recover(rid, grep="a(?=b)")

        client.write_code_client("python", tmp_path / "py")
        with generated_modules(tmp_path / "py") as load:
            demo = load("demo")
            assert demo.squeeze_recover(rid, grep="proxy", ignore_case=True, context=1, skip=3) == expected
            assert demo.squeeze_recover(rid, search="proxy cache", context=0) == searched


@pytest.mark.anyio
async def test_squeezer_recover_greps_its_own_store() -> None:
    text = "".join(f"line {i}: {'needle' if i % 50 == 0 else 'hay'}\n" for i in range(1, 1001))
    squeezer = Squeezer(budget=2000)
    presented = await squeezer.present("s", "t", {}, {"content": [{"type": "text", "text": text}]})
    rid = presented["_meta"]["truncation"]["response_id"]
    result = squeezer.recover_result(rid, grep="needle", context=0)
    assert result["_meta"]["mcpsqueeze/search"] == {"total": 20, "skip": 0, "shown": 20}
    assert squeezer.recover(rid, grep="needle", context=0) == grep(text, "needle", context=0).text
    squeezer.close()
