"""grep and search through the Python doors (issue 21 item 2): `Client.recover`, `Squeezer.recover`, and
Code Mode's generated Python and TypeScript `squeeze_recover`, which ask serve's HTTP API
(`GET /v1/recover/<id>?grep=...`) on the Client's private socket. Each answers what the core answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpsqueeze import Client, Squeezer, UsageError
from mcpsqueeze.core._search import grep
from rawclient import require_node_paths

DEMO = {"demo": {"command": sys.executable, "args": ["-m", "mcpsqueeze.demo.server"]}}

PY_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import demo
rid = sys.argv[2]
out = {
    "grep": demo.squeeze_recover(rid, grep="proxy", ignore_case=True, context=1, skip=3),
    "search": demo.squeeze_recover(rid, search="proxy cache", context=0),
}
print(json.dumps(out))
"""

TS_SCRIPT = """
import * as demo from "./demo.ts";
const rid = process.argv[2];
const out = {
  grep: await demo.squeezeRecover(rid, { grep: "proxy", ignore_case: true, context: 1, skip: 3 }),
  search: await demo.squeezeRecover(rid, { search: "proxy cache", context: 0 }),
};
console.log(JSON.stringify(out));
"""


def _plain_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}


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
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", PY_SCRIPT, str(tmp_path / "py"), rid],
            capture_output=True, text=True, env=_plain_env(), timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"grep": expected, "search": searched}

        node = require_node_paths("NODE22")["NODE22"]
        client.write_code_client("typescript", tmp_path / "ts")
        (tmp_path / "ts" / "check.ts").write_text(TS_SCRIPT, encoding="utf-8")
        done = subprocess.run(
            [node, "--experimental-strip-types", "--no-warnings", "check.ts", rid],
            capture_output=True, text=True, env=_plain_env(), cwd=tmp_path / "ts", timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"grep": expected, "search": searched}


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
