"""`client.write_code_client`: generated Python calling a Client's tools over its private socket, imported
in this process (the generated TypeScript on Node, and Python in a fresh `-I -S` interpreter:
tests/codemode/test_code_mode.py)."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpsqueeze import Client
from mcpsqueeze._lines import split_lines
from memwrap import generated_modules

DEMO = {"demo": {"command": sys.executable, "args": ["-m", "mcpsqueeze.demo.server"]}}
BUDGET = 3000


def _run(demo: Any, tag: str) -> dict[str, Any]:
    """What an agent's script does with the generated module `demo`."""
    value = demo.search_issues(f"client code mode {tag}")
    record = demo.truncation_of(value)
    out = {"kind": type(value).__name__, "record": record, "action": value.action}
    out["shown"] = len(json.dumps(dict(value), separators=(",", ":"), ensure_ascii=False))
    out["full"] = demo.squeeze_recover(record["response_id"])
    out["node"] = demo.squeeze_recover(record["response_id"], pointer="/issues/3")
    text = demo.read_file(f"client lines {tag}")
    out["text_id"] = demo.truncation_of(text)["response_id"]
    out["lines"] = demo.squeeze_recover(out["text_id"], lines="5-9")
    out["sum"] = demo.add(2, 40)
    try:
        demo.fail(f"boom {tag}")
    except demo.SqueezeToolError as exc:
        out["error"] = [exc.server, exc.tool, exc.message]
    try:
        demo.squeeze_recover("0" * 32)
    except demo.SqueezeSessionError as exc:
        out["missing"] = [exc.code, exc.status]
    return out


def check(out: dict[str, Any], client: Client, tag: str) -> None:
    record = out["record"]
    assert record["report"]["pruned"] is True and out["shown"] <= BUDGET
    whole = json.loads(client.recover(record["response_id"]))  # the Client's own store holds it
    assert out["full"] == whole and len(whole["issues"]) == 300
    assert out["node"] == whole["issues"][3]
    text = client.recover(out["text_id"])  # lines 5-9 of the stored text, byte for byte
    assert out["lines"] == "".join(split_lines(text)[4:9]) and out["lines"].count("\n") == 5
    assert out["sum"] == {"a": 2, "b": 40, "sum": 42}
    assert out["error"][:2] == ["demo", "fail"] and f"boom {tag}" in out["error"][2]
    assert out["missing"] == ["not_found", 404]


def test_generated_python_calls_a_clients_tools_over_its_private_socket(tmp_path: Path) -> None:
    with Client(DEMO, budget=BUDGET, config=False) as client:
        written = client.write_code_client("python", tmp_path / "py")
        assert {p.name for p in written} == {"squeeze_runtime.py", "demo.py"}
        assert client._code_api is not None and client._code_api.socket_path is not None
        sock = client._code_api.socket_path
        assert stat.S_ISSOCK(sock.lstat().st_mode) and stat.S_IMODE(sock.lstat().st_mode) == 0o600
        assert (
            stat.S_IMODE(sock.parent.lstat().st_mode) == 0o700 and sock.parent.owner() == Path.home().owner()
        )
        assert json.dumps(str(sock)) in (tmp_path / "py" / "squeeze_runtime.py").read_text()

        with generated_modules(tmp_path / "py") as load:
            py = _run(load("demo"), "py")
        assert py["kind"] == "SqueezedDict" and py["action"] == "shrink"
        check(py, client, "py")
    assert not sock.exists() and not sock.parent.exists()  # gone with the client


@pytest.mark.anyio
async def test_under_async_with_write_code_client_is_awaited_and_the_socket_serves_on_the_callers_loop(
    tmp_path: Path,
) -> None:
    async with Client(DEMO, budget=BUDGET, config=False) as client:
        await client.write_code_client("python", tmp_path / "py")
        with generated_modules(tmp_path / "py") as load:
            demo = load("demo")
            out = await anyio.to_thread.run_sync(_run, demo, "async")  # the socket serves on this loop
        record = out["record"]
        assert out["full"] == json.loads(await client.recover(record["response_id"]))
        sock = client._code_api.socket_path if client._code_api else None
    assert sock is not None and not sock.exists()
