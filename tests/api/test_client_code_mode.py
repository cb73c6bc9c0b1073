"""`client.write_code_client`: generated Python and TypeScript calling a Client's tools over its private socket."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpsqueeze import Client
from mcpsqueeze._lines import split_lines
from rawclient import require_node_paths

DEMO = {"demo": {"command": sys.executable, "args": ["-m", "mcpsqueeze.demo.server"]}}
BUDGET = 3000

PY_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import demo
value = demo.search_issues("client code mode")
record = demo.truncation_of(value)
out = {"kind": type(value).__name__, "record": record, "action": value.action}
out["shown"] = len(json.dumps(dict(value), separators=(",", ":"), ensure_ascii=False))
out["full"] = demo.squeeze_recover(record["response_id"])
out["node"] = demo.squeeze_recover(record["response_id"], pointer="/issues/3")
text = demo.read_file("client lines py")
out["text_id"] = demo.truncation_of(text)["response_id"]
out["lines"] = demo.squeeze_recover(out["text_id"], lines="5-9")
out["sum"] = demo.add(2, 40)
try:
    demo.fail("boom py")
except demo.SqueezeToolError as exc:
    out["error"] = [exc.server, exc.tool, exc.message]
try:
    demo.squeeze_recover("0" * 32)
except demo.SqueezeSessionError as exc:
    out["missing"] = [exc.code, exc.status]
print(json.dumps(out))
"""

TS_SCRIPT = """
import * as demo from "./demo.ts";
const out: Record<string, unknown> = {};
const value = (await demo.searchIssues({ query: "client code mode ts" })) as any;
const record = demo.truncationOf(value)!;
out.kind = Array.isArray(value) ? "array" : typeof value;
out.record = record;
out.shown = JSON.stringify(value).length;
out.full = await demo.squeezeRecover(record.response_id!);
out.node = await demo.squeezeRecover(record.response_id!, { pointer: "/issues/3" });
const text = (await demo.readFile({ path: "client lines ts" })) as string;
out.text_id = demo.truncationOf(text)!.response_id;
out.lines = await demo.squeezeRecover(out.text_id as string, { lines: "5-9" });
out.sum = await demo.add({ a: 2, b: 40 });
try {
  await demo.fail({ message: "boom ts" });
} catch (error) {
  const e = error as InstanceType<typeof demo.SqueezeToolError>;
  out.error = [e.server, e.tool, e.message];
}
try {
  await demo.squeezeRecover("0".repeat(32));
} catch (error) {
  const e = error as InstanceType<typeof demo.SqueezeSessionError>;
  out.missing = [e.code, e.status];
}
console.log(JSON.stringify(out));
"""


def _plain_env() -> dict[str, str]:
    """No MCPSQUEEZE_* at all: the generated code must find the Client's socket from what was written."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}


def _check(out: dict[str, Any], client: Client, tag: str) -> None:
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


def test_generated_python_and_typescript_call_a_clients_tools_over_its_private_socket(tmp_path: Path) -> None:
    node = require_node_paths("NODE22")["NODE22"]
    with Client(DEMO, budget=BUDGET, config=False) as client:
        written = client.write_code_client("python", tmp_path / "py")
        assert {p.name for p in written} == {"squeeze_runtime.py", "demo.py"}
        client.write_code_client("typescript", tmp_path / "ts")
        assert client._code_api is not None and client._code_api.socket_path is not None
        sock = client._code_api.socket_path
        assert stat.S_ISSOCK(sock.lstat().st_mode) and stat.S_IMODE(sock.lstat().st_mode) == 0o600
        assert (
            stat.S_IMODE(sock.parent.lstat().st_mode) == 0o700 and sock.parent.owner() == Path.home().owner()
        )
        assert json.dumps(str(sock)) in (tmp_path / "py" / "squeeze_runtime.py").read_text()

        # -I -S: no site-packages at all, so the generated code can only use the standard library
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", PY_SCRIPT, str(tmp_path / "py")],
            capture_output=True, text=True, env=_plain_env(), timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        py = json.loads(done.stdout)
        assert py["kind"] == "SqueezedDict" and py["action"] == "shrink"
        _check(py, client, "py")

        (tmp_path / "ts" / "check.ts").write_text(TS_SCRIPT, encoding="utf-8")
        done = subprocess.run(
            [node, "--experimental-strip-types", "--no-warnings", "check.ts"],
            capture_output=True, text=True, env=_plain_env(), cwd=tmp_path / "ts", timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        ts = json.loads(done.stdout)
        assert ts["kind"] == "object"
        _check(ts, client, "ts")
    assert not sock.exists() and not sock.parent.exists()  # gone with the client


@pytest.mark.anyio
async def test_under_async_with_write_code_client_is_awaited_and_the_socket_serves_on_the_callers_loop(
    tmp_path: Path,
) -> None:
    async with Client(DEMO, budget=BUDGET, config=False) as client:
        await client.write_code_client("python", tmp_path / "py")
        done = await anyio.run_process(
            [sys.executable, "-I", "-S", "-c", PY_SCRIPT, str(tmp_path / "py")], env=_plain_env(), check=False
        )
        assert done.returncode == 0, done.stderr.decode()
        out = json.loads(done.stdout)
        record = out["record"]
        assert out["full"] == json.loads(await client.recover(record["response_id"]))
        sock = client._code_api.socket_path if client._code_api else None
    assert sock is not None and not sock.exists()
