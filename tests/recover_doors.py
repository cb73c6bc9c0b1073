"""One original, recovered through every door: `every_door(tmp, text, asks)` shrinks `text` (the demo
server's `echo`, or the host's result in hand) and sends each recover arguments object of `asks` through
wrap over stdio, wrap over HTTP in both protocol revisions, serve's API, `mcpsq recover`, `Squeezer` and
`Client`. Each answer is an `Answered`: the text the agent reads, whether it was an error, and the
seconds it took. The doors run in this process (memwrap); whatever a door logs is in `logs` (a
traceback there fails the caller's check)."""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter

from mcpsqueeze import Client, RecoveryError, Squeezer, UsageError
from mcpsqueeze.core import parts_text
from memwrap import HttpWrap, MemoryWrap, Serve, mcpsq
from rawclient import demo_server
from serve.serve_api import api, write_token

RAW: Any = TypeAdapter(dict[str, Any])
BUDGET = "2000"
SHELL_FLAGS = {"pointer": "--pointer", "lines": "--lines", "grep": "--grep", "search": "--search"}
SHELL_FLAGS |= {"context": "--context", "skip": "--skip", "ignore_case": "-i"}
DOORS = ("wrap-stdio", "wrap-http-2025-11-25", "wrap-http-2026-07-28", "serve", "mcpsq", "squeezer", "client")


@dataclass
class Answered:
    text: str
    error: bool
    seconds: float


@dataclass
class Doors:
    answers: dict[str, list[Answered]] = field(default_factory=dict)
    logs: list[str] = field(default_factory=list)


Ask = Callable[[dict[str, Any]], tuple[str, bool]]


def _each(asks: list[dict[str, Any]], ask: Ask) -> list[Answered]:
    """Each recover arguments object asked in turn: the answer, timed."""
    answers = []
    for arguments in asks:
        started = time.monotonic()
        text, error = ask(arguments)
        answers.append(Answered(text, error, time.monotonic() - started))
    return answers


def _text(result: dict[str, Any]) -> tuple[str, bool]:
    blocks = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
    return "".join(blocks), result.get("isError") is True


def _rid(result: dict[str, Any]) -> str:
    rid: str = result["_meta"]["truncation"]["response_id"]
    return rid


def every_door(tmp: Path, original: str, asks: list[dict[str, Any]], doors: tuple[str, ...] = DOORS) -> Doors:
    out = Doors()
    wrap_args = ["--recovery-dir", str(tmp / "rec"), "--budget", BUDGET]
    if "wrap-stdio" in doors:
        with MemoryWrap(wrap_args) as client:
            client.initialize()
            rid = _rid(client.call("echo", {"text": original}))

            def over_stdio(arguments: dict[str, Any]) -> tuple[str, bool]:
                return _text(client.call("squeeze_recover", {"response_id": rid, **arguments}, timeout=60))

            out.answers["wrap-stdio"] = _each(asks, over_stdio)
            client.close()
        out.logs.append("".join(client.stderr_lines))
    http = [d for d in doors if d.startswith("wrap-http-")]
    if http:
        with HttpWrap(wrap_args, demo_server()) as wrap:
            for door in http:
                mode = door.removeprefix("wrap-http-")
                out.answers[door] = anyio.run(
                    _over_http, wrap.url, "legacy" if mode < "2026" else mode, original, asks
                )
        out.logs.append(wrap.stderr)
    if "serve" in doors or "mcpsq" in doors:
        _serve_and_shell(tmp, original, asks, doors, out)
    if "squeezer" in doors:
        squeezer = Squeezer(budget=int(BUDGET))
        result = anyio.run(squeezer.present, "s", "t", {}, {"content": [{"type": "text", "text": original}]})
        rid = _rid(result)
        out.answers["squeezer"] = _each(asks, lambda a: _library(squeezer.answer_recover, rid, a))
        squeezer.close()
    if "client" in doors:
        demo = {"demo": {"command": sys.executable, "args": ["-m", "mcpsqueeze.demo.server"]}}
        with Client(demo, budget=int(BUDGET)) as library:
            rid = _rid(library.call("demo", "echo", {"text": original}))

            def by_client(arguments: dict[str, Any]) -> dict[str, Any]:
                return {"content": [{"type": "text", "text": library.recover(**arguments)}]}

            out.answers["client"] = _each(asks, lambda a: _library(by_client, rid, a))
    return out


def _library(
    recover: Callable[[dict[str, Any]], dict[str, Any]], rid: str, ask: dict[str, Any]
) -> tuple[str, bool]:
    try:
        result = recover({"response_id": rid, **ask})
    except (UsageError, RecoveryError) as exc:
        return str(exc), True
    return parts_text(result), False


async def _over_http(url: str, mode: str, original: str, asks: list[dict[str, Any]]) -> list[Answered]:
    async with (
        httpx2.AsyncClient(timeout=60) as http,
        SdkClient(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):

        async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            params = types.CallToolRequestParams(name=name, arguments=arguments)
            result: dict[str, Any] = await client.session.send_request(
                types.CallToolRequest(params=params), RAW
            )
            return result

        rid = _rid(await call("echo", {"text": original}))
        answers = []
        for ask in asks:
            started = time.monotonic()
            text, error = _text(await call("squeeze_recover", {"response_id": rid, **ask}))
            answers.append(Answered(text, error, time.monotonic() - started))
        return answers


def _serve_and_shell(
    tmp: Path, original: str, asks: list[dict[str, Any]], doors: tuple[str, ...], out: Doors
) -> None:
    auth = tmp / "auth"
    auth.mkdir(mode=0o700)
    token = write_token(auth / "token")
    rec = tmp / "serve-rec"
    args = ["--listen", "127.0.0.1:0", "--token-file", str(auth / "token"), "--recovery-dir", str(rec)]
    with Serve([*args, "--budget", BUDGET, "-n", "demo", "--", *demo_server()]) as served:
        url = served.where
        status, first = api(
            url, token, "/v1/call", {"server": "demo", "tool": "echo", "arguments": {"text": original}}
        )
        assert status == 200 and first["response_id"], first
        rid = first["response_id"]
        if "serve" in doors:

            def ask_serve(ask: dict[str, Any]) -> tuple[str, bool]:
                query = urllib.parse.urlencode(
                    {k: v if isinstance(v, str) else json.dumps(v) for k, v in ask.items()}
                )
                status, body = api(url, token, f"/v1/recover/{rid}?{query}")
                if status != 200:
                    return body["error"]["message"], True
                return parts_text(body["result"]), False

            out.answers["serve"] = _each(asks, ask_serve)
        if "mcpsq" in doors:
            env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
            env |= {"MCPSQUEEZE_RECOVERY_DIR": str(rec), "MCPSQUEEZE_SOCKET": str(tmp / "none.sock")}

            def ask_shell(ask: dict[str, Any]) -> tuple[str, bool]:
                flags = []
                for key, value in ask.items():
                    flags += [SHELL_FLAGS[key]] if value is True else [SHELL_FLAGS[key], str(value)]
                done = mcpsq(["recover", rid, *flags], env)
                out.logs.append(done.stderr)
                return (done.stdout, False) if done.returncode == 0 else (done.stderr, True)

            out.answers["mcpsq"] = _each(asks, ask_shell)
    out.logs.append(served.stderr)
