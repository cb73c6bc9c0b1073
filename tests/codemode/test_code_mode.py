"""Code Mode: generated Python and TypeScript, executed as an agent runs them (a fresh `python -I -S`, Node
22) against a real `mcpsqueeze serve` (in this process) and a `Client`'s private socket, and pinned by
golden files."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcpsqueeze._errors import UsageError
from mcpsqueeze._lines import split_lines
from mcpsqueeze.codemode import Endpoint, render_code_client, write_code_client
from mcpsqueeze.codemode._schema import camel, snake, tools_of
from memwrap import Serve, run_cli
from rawclient import assert_golden, demo_server, require_node_paths

GOLDEN = Path(__file__).with_name("golden")
BUDGET = 3000


@dataclass
class Session:
    env: dict[str, str]  # MCPSQUEEZE_* pointing at this session
    listing: list[dict[str, Any]]
    token: str | None = None


@contextlib.contextmanager
def _serving(tmp: Path, *where: str) -> Iterator[Session]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    args = [
        "--recovery-dir",
        str(tmp / "rec"),
        "--budget",
        str(BUDGET),
        *where,
        "-n",
        "demo",
        "--",
        *demo_server(),
    ]
    with Serve(args) as served:
        if served.where.startswith("http://"):
            session_env = {**env, "MCPSQUEEZE_URL": served.where, "MCPSQUEEZE_TOKEN_FILE": str(tmp / "token")}
            token: str | None = (tmp / "token").read_text().strip()
        else:
            session_env, token = {**env, "MCPSQUEEZE_SOCKET": served.where}, None
        from mcpsqueeze.bash import SessionClient

        _, body = SessionClient.from_environ(session_env).request("GET", "/v1/servers")
        yield Session(session_env, body["servers"][0]["tools"], token)


@pytest.fixture(scope="module")
def unix_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    tmp = tmp_path_factory.mktemp("unix")
    with _serving(tmp, "--socket", str(tmp / "run" / "s.sock")) as session:
        yield session


@pytest.fixture(scope="module")
def tcp_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    tmp = tmp_path_factory.mktemp("tcp")
    with _serving(tmp, "--listen", "127.0.0.1:0", "--token-file", str(tmp / "token")) as session:
        yield session


def _install(serve: Session, lang: str, directory: Path) -> list[str]:
    done = run_cli("install-commands", "--lang", lang, str(directory), env=serve.env)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


PY_SCRIPT = """
import json, re, sys
sys.path.insert(0, sys.argv[1])
import demo
tag = sys.argv[2]
out = {}
value = demo.search_issues("code mode " + tag)
record = demo.truncation_of(value)
out["kind"] = type(value).__name__
out["keys"] = sorted(value)
out["truncation"] = record
out["shown"] = len(json.dumps(dict(value), separators=(",", ":"), ensure_ascii=False))
out["full"] = demo.squeeze_recover(record["response_id"])
out["node"] = demo.squeeze_recover(record["response_id"], pointer="/issues/3")
out["window"] = demo.squeeze_recover(record["response_id"], offset=0, length=20)
text = demo.read_file("lines " + tag)
folded = demo.truncation_of(text)
fold = re.search(r"\\[lines ([0-9]+)-([0-9]+) folded", text)
out["fold"] = [int(fold.group(1)), int(fold.group(2))]
out["text_file"] = folded["original_response_file"]
out["lines"] = demo.squeeze_recover(folded["response_id"], lines="%d-%d" % tuple(out["fold"]))
out["sum"] = demo.add(2, 40)
out["echo"] = [demo.echo("hi"), demo.truncation_of(demo.echo("hi " + tag))]
try:
    demo.fail("boom " + tag)
except demo.SqueezeToolError as exc:
    out["error"] = [type(exc).__name__, exc.server, exc.tool, exc.message]
try:
    demo.squeeze_recover("0" * 32)
except demo.SqueezeSessionError as exc:
    out["missing"] = [exc.code, exc.status]
print(json.dumps(out))
"""

TS_SCRIPT = """
import * as demo from "./demo.ts";
const tag = process.argv[2];
const out: Record<string, unknown> = {};
const value = (await demo.searchIssues({ query: "code mode " + tag })) as any;
const record = demo.truncationOf(value)!;
out.kind = Array.isArray(value) ? "array" : typeof value;
out.keys = Object.keys(value).sort();
out.truncation = record;
out.shown = JSON.stringify(value).length;
out.full = await demo.squeezeRecover(record.response_id!);
out.node = await demo.squeeze_recover(record.response_id!, { pointer: "/issues/3" });
out.window = await demo.squeezeRecover(record.response_id!, { offset: 0, length: 20 });
const text = (await demo.readFile({ path: "lines " + tag })) as string;
const folded = demo.truncationOf(text)!;
const fold = /\\[lines ([0-9]+)-([0-9]+) folded/.exec(text)!;
out.fold = [Number(fold[1]), Number(fold[2])];
out.text_file = folded.original_response_file;
out.lines = await demo.squeezeRecover(folded.response_id!, { lines: `${fold[1]}-${fold[2]}` });
out.sum = await demo.add({ a: 2, b: 40 });
out.echo = [await demo.echo({ text: "hi" }), demo.truncationOf(await demo.echo({ text: "hi " + tag }))];
try {
  await demo.fail({ message: "boom " + tag });
} catch (error) {
  const e = error as InstanceType<typeof demo.SqueezeToolError>;
  out.error = [error instanceof demo.SqueezeToolError ? "SqueezeToolError" : "?", e.server, e.tool, e.message];
}
try {
  await demo.squeezeRecover("0".repeat(32));
} catch (error) {
  const e = error as InstanceType<typeof demo.SqueezeSessionError>;
  out.missing = [e.code, e.status];
}
console.log(JSON.stringify(out));
"""


def _check(out: dict[str, Any], tag: str) -> None:
    record = out["truncation"]
    original = json.loads(Path(record["original_response_file"]).read_text(encoding="utf-8"))
    whole = json.loads(original["content"][0]["text"])
    assert out["kind"] in ("SqueezedDict", "object")
    assert {"issues", "total_count", "truncation"} <= set(out["keys"])
    assert record["report"]["pruned"] is True and out["shown"] <= BUDGET
    assert out["full"] == whole and len(whole["issues"]) == 300  # recovered byte for byte, parsed
    assert out["node"] == whole["issues"][3]
    assert out["window"] == original["content"][0]["text"][:20]
    text = json.loads(Path(out["text_file"]).read_text(encoding="utf-8"))["content"][0]["text"]
    first, last = out["fold"]
    assert 1 < first <= last  # a fold the preview showed, recovered byte for byte as text
    assert out["lines"] == "".join(split_lines(text)[first - 1 : last])
    assert out["sum"] == {"a": 2, "b": 40, "sum": 42}
    assert out["echo"] == ["hi", None]
    assert out["error"][0] == "SqueezeToolError" and out["error"][1:3] == ["demo", "fail"]
    assert f"boom {tag}" in out["error"][3]
    assert out["missing"] == ["not_found", 404]


def _run_python(directory: Path, tag: str, env: dict[str, str]) -> dict[str, Any]:
    # -I -S: no site-packages at all, so the generated code can only use the standard library
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", PY_SCRIPT, str(directory), tag],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _run_typescript(directory: Path, tag: str, env: dict[str, str]) -> dict[str, Any]:
    node = require_node_paths("NODE22")["NODE22"]
    (directory / "check.ts").write_text(TS_SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [node, "--experimental-strip-types", "--no-warnings", "check.ts", tag],
        capture_output=True, text=True, env=env, cwd=directory, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _plain_env(serve: Session) -> dict[str, str]:
    """No MCPSQUEEZE_* at all: the generated code must find the session from what was written."""
    return {k: v for k, v in serve.env.items() if not k.startswith("MCPSQUEEZE_")}


def test_generated_python_calls_tools_raises_typed_errors_and_recovers_over_the_unix_socket(
    unix_session: Session, tmp_path: Path
) -> None:
    _install(unix_session, "python", tmp_path / "py")
    _check(_run_python(tmp_path / "py", "py-unix", _plain_env(unix_session)), "py-unix")


def test_generated_python_reads_the_token_file_at_call_time_over_tcp(
    tcp_session: Session, tmp_path: Path
) -> None:
    written = _install(tcp_session, "python", tmp_path / "py")
    assert tcp_session.token and all(tcp_session.token not in Path(p).read_text() for p in written)
    _check(_run_python(tmp_path / "py", "py-tcp", _plain_env(tcp_session)), "py-tcp")


def test_generated_typescript_runs_on_node_22_over_the_unix_socket(
    unix_session: Session, tmp_path: Path
) -> None:
    _install(unix_session, "typescript", tmp_path / "ts")
    _check(_run_typescript(tmp_path / "ts", "ts-unix", _plain_env(unix_session)), "ts-unix")


def test_generated_typescript_uses_fetch_with_the_token_over_tcp(
    tcp_session: Session, tmp_path: Path
) -> None:
    written = _install(tcp_session, "typescript", tmp_path / "ts")
    assert tcp_session.token and all(tcp_session.token not in Path(p).read_text() for p in written)
    _check(_run_typescript(tmp_path / "ts", "ts-tcp", _plain_env(tcp_session)), "ts-tcp")


def test_the_generated_code_for_the_demo_server_is_pinned(unix_session: Session) -> None:
    for lang in ("python", "typescript"):
        files = render_code_client(
            lang, {"demo": unix_session.listing}, Endpoint("/run/mcpsqueeze/session.sock")
        )
        for name, text in files.items():
            assert_golden(GOLDEN / f"{name}.txt", text)


def test_a_tcp_endpoint_writes_the_token_file_path_never_a_token() -> None:
    files = render_code_client(
        "python", {}, Endpoint(url="http://127.0.0.1:8766", token_file="/run/user/1/mcpsqueeze/token")
    )
    runtime = files["squeeze_runtime.py"]
    assert 'GENERATED_URL: str | None = "http://127.0.0.1:8766"' in runtime
    assert 'GENERATED_TOKEN_FILE: str | None = "/run/user/1/mcpsqueeze/token"' in runtime


def test_names_become_snake_case_in_python_and_camel_case_in_typescript() -> None:
    assert [snake(n) for n in ("search-issues", "getHTTPThing", "class", "2fa", "x.y")] == [
        "search_issues", "get_httpthing", "class_", "_2fa", "x_y",
    ]  # fmt: skip
    assert [camel(n) for n in ("search_issues", "search-issues", "default", "2fa")] == [
        "searchIssues", "searchIssues", "default_", "_2fa",
    ]  # fmt: skip
    tools = tools_of([{"name": "a-b"}, {"name": "a_b"}, {"name": "squeeze_recover"}], {"squeeze_recover"})
    assert [t.py for t in tools] == ["a_b", "a_b_2", "squeeze_recover_2"]


HOSTILE = [
    {
        "name": "weird-tool",
        "description": 'Ends with a quote " and has """triple""" quotes, a \\ backslash and a */ comment end "',
        "inputSchema": {
            "type": "object",
            "properties": {
                "from": {"type": "string", "description": "a keyword name */"},
                "opt-list": {"type": "array", "items": {"type": ["string", "null"]}, "default": ["a"]},
                "choice": {"enum": ["x", "y"], "default": "y"},
                "any": {},
            },
            "required": ["from"],
        },
    },
    {"name": "no_schema"},
]


def test_hostile_descriptions_and_names_still_give_valid_python(tmp_path: Path) -> None:
    files = render_code_client("python", {"json": HOSTILE}, Endpoint("/s.sock"))
    assert set(files) == {"squeeze_runtime.py", "json_server.py"}  # never shadows the standard library
    for name, text in files.items():
        compile(text, name, "exec")
    namespace: dict[str, Any] = {}
    sys.modules.pop("squeeze_runtime", None)
    sys.path.insert(0, str(tmp_path))
    try:
        for name, text in files.items():
            (tmp_path / name).write_text(text)
        exec(compile(files["json_server.py"], "json_server.py", "exec"), namespace)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("squeeze_runtime", None)
    doc = namespace["weird_tool"].__doc__
    assert '"""triple"""' in doc and "\\ backslash" in doc
    import inspect

    assert str(inspect.signature(namespace["weird_tool"])) == (
        "(from_: 'str', opt_list: 'list[str | None] | None' = None, choice: \"Literal['x', 'y']\" = 'y', "
        "any: 'Any' = None) -> 'Any'"
    )


def test_hostile_descriptions_cannot_end_a_typescript_comment() -> None:
    text = render_code_client("typescript", {"s": HOSTILE}, Endpoint("/s.sock"))["s.ts"]
    assert "*/ comment" not in text and "*\\/ comment" in text
    assert (
        "  from: string;" in text
        and '  choice?: "x" | "y";' in text
        and "  optList?: (string | null)[];" in text
    )


def test_files_not_written_by_us_are_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "demo.py").write_text("mine = True\n")
    with pytest.raises(UsageError, match="Refusing to overwrite"):
        write_code_client("python", tmp_path, {"demo": []}, Endpoint("/s.sock"))
    assert (tmp_path / "demo.py").read_text() == "mine = True\n" and not (
        tmp_path / "squeeze_runtime.py"
    ).exists()
    written = write_code_client("python", tmp_path / "fresh", {"demo": []}, Endpoint("/s.sock"))
    assert write_code_client("python", tmp_path / "fresh", {"demo": []}, Endpoint("/s.sock")) == written


def test_install_commands_for_a_server_the_session_does_not_have_exits_2(
    unix_session: Session, tmp_path: Path
) -> None:
    done = run_cli(
        "install-commands",
        "--lang",
        "typescript",
        "--server",
        "nope",
        str(tmp_path / "ts"),
        env=unix_session.env,
    )
    assert done.returncode == 2 and "no server named nope" in done.stderr
    assert not (tmp_path / "ts").exists()


# -- a Client's generated TypeScript, on its private socket


CLIENT_TS = """
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


CLIENT_SEARCH_TS = """
import * as demo from "./demo.ts";
const rid = process.argv[2];
const out = {
  grep: await demo.squeezeRecover(rid, { grep: "proxy", ignore_case: true, context: 1, skip: 3 }),
  search: await demo.squeezeRecover(rid, { search: "proxy cache", context: 0 }),
};
console.log(JSON.stringify(out));
"""


def test_a_clients_generated_typescript_calls_its_tools_and_recovers_over_its_private_socket(
    tmp_path: Path,
) -> None:
    from api.test_client_code_mode import BUDGET as CLIENT_BUDGET
    from api.test_client_code_mode import DEMO, check
    from mcpsqueeze import Client
    from mcpsqueeze.core._search import grep

    node = require_node_paths("NODE22")["NODE22"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    with Client(DEMO, budget=CLIENT_BUDGET, config=False) as client:
        client.write_code_client("typescript", tmp_path / "ts")
        (tmp_path / "ts" / "check.ts").write_text(CLIENT_TS, encoding="utf-8")
        (tmp_path / "ts" / "search.ts").write_text(CLIENT_SEARCH_TS, encoding="utf-8")
        run = [node, "--experimental-strip-types", "--no-warnings"]
        done = subprocess.run(
            [*run, "check.ts"], capture_output=True, text=True, env=env, cwd=tmp_path / "ts", timeout=60
        )
        assert done.returncode == 0, done.stderr
        ts = json.loads(done.stdout)
        assert ts["kind"] == "object"
        check(ts, client, "ts")
        shrunk = client.call("demo", "read_file", {"path": "doors.txt"})
        rid = shrunk["_meta"]["truncation"]["response_id"]
        expected = grep(client.recover(rid), "proxy", ignore_case=True, context=1, skip=3).text
        searched = client.recover(rid, search="proxy cache", context=0)
        done = subprocess.run(
            [*run, "search.ts", rid], capture_output=True, text=True, env=env, cwd=tmp_path / "ts", timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"grep": expected, "search": searched}
