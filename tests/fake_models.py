"""Scripted stand-ins for a model's API on loopback: the real agent CLIs run offline, and a test reads
what each CLI hands its model as a tool result.

`MessagesApi` speaks Anthropic's Messages API (streamed events) for Claude Code (`ANTHROPIC_BASE_URL`);
`ResponsesApi` speaks OpenAI's Responses API (streamed events) for Codex (a `model_providers` entry with
`wire_api = "responses"`). Each scripts one call: the first request that offers the tool gets a call of
it with the given arguments, every other request the answer "done". Each keeps every request body, and
`tool_result` is what the CLI sent back for that call: the text its model reads, exactly.

`claude_code(api, servers, home)` and `codex(api, servers, home)` run the CLIs installed by
scripts/install-test-deps.sh against such an API, with the MCP `servers` given
(`{name: {"command", "args", "env"?}}`), in a scratch `home` (nothing of the user's own configuration is
read or written), and return the finished process. How each runs offline is in docs/testing.md
("The real agent CLIs").
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from rawclient import require_node_paths

__all__ = ["MessagesApi", "ResponsesApi", "claude_code", "codex"]

DONE = "done"


class _ScriptedApi:
    """A loopback HTTP server (a thread of this process) that answers as `_answer` says."""

    def __init__(self, tool: str, arguments: dict[str, Any] | None = None) -> None:
        self.tool = tool  # as the CLI names it to its model
        self.arguments = arguments or {}
        self.requests: list[dict[str, Any]] = []
        self.called = False
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with api._lock:
                    api.requests.append({"path": self.path, "body": body})
                    status, kind, payload = api._answer(self.path, body)
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _offers_the_tool(self, body: dict[str, Any]) -> bool:
        raise NotImplementedError

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        raise NotImplementedError

    def _call_now(self, body: dict[str, Any]) -> bool:
        """The one request answered with the tool call: the first that offers the tool."""
        if self.called or not self._offers_the_tool(body):
            return False
        self.called = True
        return True


def _events(events: list[dict[str, Any]]) -> tuple[int, str, bytes]:
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return 200, "text/event-stream", text.encode()


def _text_of(content: Any) -> str:
    """A tool result's content as its model reads it: the string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return json.dumps(content)


class MessagesApi(_ScriptedApi):
    """Anthropic's Messages API as Claude Code uses it (`POST /v1/messages`, streamed; token counts).
    `tool` is the model's name of an MCP tool: `mcp__<server>__<tool>`."""

    def _offers_the_tool(self, body: dict[str, Any]) -> bool:
        return any(t.get("name") == self.tool for t in body.get("tools") or [])

    @property
    def tool_result(self) -> str:
        """What the model was handed for the call: the `tool_result` block's content, as text."""
        for request in self.requests:
            for message in request["body"].get("messages") or []:
                content = message.get("content")
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        return _text_of(block.get("content"))
        raise AssertionError(f"the CLI handed its model no tool result ({len(self.requests)} requests)")

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        if path.startswith("/v1/messages/count_tokens"):
            return 200, "application/json", json.dumps({"input_tokens": 1000}).encode()
        if self._call_now(body):
            block = {"type": "tool_use", "id": "toolu_01", "name": self.tool, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(self.arguments)}
            stop = "tool_use"
        else:
            block, delta, stop = (
                {"type": "text", "text": ""},
                {"type": "text_delta", "text": DONE},
                "end_turn",
            )
        usage = {"input_tokens": 10, "output_tokens": 1}
        message: dict[str, Any] = {"id": "msg_01", "type": "message", "role": "assistant", "model": body.get("model"),
                   "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}  # fmt: skip
        if not body.get("stream"):
            whole = {**message, "content": [{"type": "text", "text": DONE}], "stop_reason": "end_turn"}
            return 200, "application/json", json.dumps(whole).encode()
        return _events(
            [
                {"type": "message_start", "message": message},
                {"type": "content_block_start", "index": 0, "content_block": block},
                {"type": "content_block_delta", "index": 0, "delta": delta},
                {"type": "content_block_stop", "index": 0},
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": usage,
                },
                {"type": "message_stop"},
            ]
        )


class ResponsesApi(_ScriptedApi):
    """OpenAI's Responses API as Codex uses it (`POST /v1/responses`, streamed). Codex offers an MCP
    server's tools in a namespace `mcp__<server>`: `tool` is `mcp__<server>__<tool>`, as for Claude Code."""

    def _split(self) -> tuple[str, str]:
        namespace, _, name = self.tool.rpartition("__")
        return namespace, name

    def _offers_the_tool(self, body: dict[str, Any]) -> bool:
        namespace, name = self._split()
        for entry in body.get("tools") or []:
            if entry.get("type") == "namespace" and entry.get("name") == namespace:
                return any(t.get("name") == name for t in entry.get("tools") or [])
        return False

    @property
    def tool_result(self) -> str:
        """What the model was handed for the call: the `function_call_output` item's output, as text."""
        for request in self.requests:
            for item in request["body"].get("input") or []:
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    return _text_of(item.get("output"))
        raise AssertionError(f"the CLI handed its model no tool result ({len(self.requests)} requests)")

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        if self._call_now(body):
            namespace, name = self._split()
            item: dict[str, Any] = {"type": "function_call", "id": "fc_01", "call_id": "call_01", "name": name,
                                    "namespace": namespace, "arguments": json.dumps(self.arguments),
                                    "status": "completed"}  # fmt: skip
        else:
            text = {"type": "output_text", "text": DONE, "annotations": []}
            item = {
                "type": "message",
                "id": "msg_01",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        response: dict[str, Any] = {"id": "resp_01", "object": "response", "status": "in_progress", "model": body.get("model"),
                    "output": []}  # fmt: skip
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                 "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}  # fmt: skip
        return _events(
            [
                {"type": "response.created", "response": response},
                {"type": "response.output_item.added", "output_index": 0, "item": item},
                {"type": "response.output_item.done", "output_index": 0, "item": item},
                {"type": "response.completed", "response": {**response, "status": "completed", "output": [item],
                                                             "usage": usage}},
            ]
        )  # fmt: skip


def _scratch(home: Path) -> dict[str, str]:
    """The CLI's whole environment: a scratch HOME, this PATH, nothing else of ours."""
    home.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}


def claude_code(
    api: MessagesApi,
    servers: dict[str, dict[str, Any]],
    home: Path,
    *,
    cwd: Path | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """`claude -p` with exactly these MCP servers, every MCP tool allowed, against `api`, working in `cwd`
    (default `home`; it is the root Claude Code offers its servers)."""
    binary = require_node_paths("CLAUDE_BIN")["CLAUDE_BIN"]
    env = _scratch(home)
    env.update(
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY="sk-ant-fake",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        ENABLE_TOOL_SEARCH="false",  # else MCP tools are not in the request's tools
    )
    config = home / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    allowed = ",".join(f"mcp__{name}__*" for name in servers)
    argv = [binary, "-p", "Call the tool.", "--mcp-config", str(config), "--strict-mcp-config",
            "--allowedTools", allowed, "--output-format", "stream-json", "--verbose"]  # fmt: skip
    return subprocess.run(argv, env=env, cwd=cwd or home, capture_output=True, text=True, timeout=timeout)


def _toml(value: Any) -> str:
    return json.dumps(value)  # a JSON string, list of strings or table of strings is valid TOML inline


def codex(
    api: ResponsesApi,
    servers: dict[str, dict[str, Any]],
    home: Path,
    *,
    cwd: Path | None = None,
    model: str = "fake-model",
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """`codex exec` with exactly these MCP servers against `api`, as a custom provider's `model` (one that
    is not in Codex's list of models: its tool output budget is then counted in bytes), working in `cwd`
    (default `home`)."""
    paths = require_node_paths("NODE22", "CODEX_JS")
    env = _scratch(home)
    env.update(CODEX_HOME=str(home / "codex"), FAKE_API_KEY="sk-fake")
    lines = [
        'model_provider = "fake"',
        "[model_providers.fake]",
        'name = "fake"',
        f"base_url = {_toml(api.url + '/v1')}",
        'wire_api = "responses"',
        'env_key = "FAKE_API_KEY"',
    ]
    for name, server in servers.items():
        lines += [
            f"[mcp_servers.{name}]",
            f"command = {_toml(server['command'])}",
            f"args = {_toml(server['args'])}",
            "required = true",  # the first turn waits until it listed its tools (else it may go without)
            "startup_timeout_sec = 60",
            "tool_timeout_sec = 120",
        ]
        if server.get("env"):
            pairs = ", ".join(f"{_toml(k)} = {_toml(v)}" for k, v in server["env"].items())
            lines.append(f"env = {{ {pairs} }}")
    (home / "codex").mkdir(exist_ok=True)
    (home / "codex" / "config.toml").write_text("\n".join(lines) + "\n")
    argv = [paths["NODE22"], paths["CODEX_JS"], "exec", "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox", "--ephemeral", "--json", "-m", model, "Call the tool."]  # fmt: skip
    return subprocess.run(
        argv,
        env=env,
        cwd=cwd or home,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
