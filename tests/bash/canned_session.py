"""A small real HTTP server speaking the session API (docs/session-api.md) with canned answers.

It stands in for `mcpsqueeze serve` in the shim-side tests only: a real socket, real HTTP, real
recovery files written the way the store writes them, answers shaped like the documented API. The
end-to-end tests against the real `serve` live with it.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def demo_tools() -> list[dict[str, Any]]:
    body = json.loads((FIXTURES / "demo_servers.json").read_text())
    return list(body["servers"][0]["tools"])


def issues(query: str, limit: int) -> dict[str, Any]:
    return {
        "total_count": limit,
        "issues": [
            {"number": 1000 + i, "title": f"{query} issue {i}", "body": "lorem ipsum " * 20, "state": "open"}
            for i in range(limit)
        ],
        "next_page_token": None,
    }


class Session:
    """The state behind the canned answers: requests seen, results stored, dedup memory."""

    def __init__(self, recovery_dir: Path, token: str | None = None, down: bool = True) -> None:
        self.recovery_dir = recovery_dir
        self.token = token
        self.down = down
        self.requests: list[dict[str, Any]] = []
        self.seen_results: dict[str, tuple[int, str]] = {}
        self.calls = 0
        self.lock = threading.Lock()
        self.socket_path: Path | None = None

    def servers(self) -> dict[str, Any]:
        servers = [{"name": "demo", "status": "up", "error": None, "tools": demo_tools()}]
        if self.down:
            servers.append(
                {
                    "name": "github",
                    "status": "down",
                    "error": "spawn failed: github-mcp not found",
                    "tools": [],
                }
            )
        return {"servers": servers, "recovery_dir": str(self.recovery_dir)}

    def store(self, result: dict[str, Any]) -> tuple[str, str]:
        response_id = secrets.token_hex(16)
        final = self.recovery_dir / f"mcpsqueeze-{response_id}.json"
        tmp = self.recovery_dir / f".mcpsqueeze-{response_id}.json.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(result, handle, ensure_ascii=False)
        os.rename(tmp, final)
        return response_id, str(final)

    def call(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        server, tool, args = body.get("server"), body.get("tool"), body.get("arguments") or {}
        if server == "github":
            return 502, {"error": {"code": "backend", "message": "the server github is down"}}
        if server != "demo":
            return 404, {"error": {"code": "unknown_server", "message": f"no server {server!r}"}}
        names = {t["name"] for t in demo_tools()}
        if tool not in names:
            return 404, {"error": {"code": "unknown_tool", "message": f"no tool {tool!r} on demo"}}
        with self.lock:
            self.calls += 1
            number = self.calls
        if tool == "crash":
            return 502, {"error": {"code": "backend", "message": "the backend demo exited with status 3"}}
        if tool == "sleep":
            return 504, {"error": {"code": "timeout", "message": "demo sleep took longer than 5 s"}}
        if tool == "fail":
            result = {"content": [{"type": "text", "text": args.get("message", "")}], "isError": True}
            return 200, _answer(result, "error")
        if tool == "image":
            png = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
            result = {"content": [png, {"type": "text", "text": "An 8x8 gradient PNG."}], "isError": False}
            return 200, _answer(result, "passthrough")
        if tool == "add":
            total = {"a": args["a"], "b": args["b"], "sum": args["a"] + args["b"]}
            result = {"content": [{"type": "text", "text": json.dumps(total)}], "structuredContent": total}
            return 200, _answer(result, "passthrough")
        if tool == "search_issues":
            return 200, self._search(args, full=bool(body.get("full")))
        if tool == "list_rows":
            return 200, self._rows(args, number)
        text = json.dumps(args, ensure_ascii=False) if tool == "kitchen_sink" else str(args.get("text", ""))
        return 200, _answer({"content": [{"type": "text", "text": text}], "isError": False}, "passthrough")

    def _search(self, args: dict[str, Any], full: bool) -> dict[str, Any]:
        original_obj = issues(str(args.get("query", "")), int(args.get("limit", 300)))
        original = {"content": [{"type": "text", "text": json.dumps(original_obj)}], "isError": False}
        if full:
            return _answer(original, "full")
        response_id, file = self.store(original)
        record = {
            "message": (
                f"Shrunk from {len(original['content'][0]['text'])} chars (297 array items omitted; … marks "
                f"each cut). To get the whole original, run `mcpsq recover {response_id}` "
                f"(or `jq -rj '.content[0].text' {file}`); "
                "add `--pointer /issues/0` to read one part."
            ),
            "response_id": response_id,
            "original_response_file": file,
            "report": {"pruned": True, "fits": True, "items_omitted": 297},
        }
        preview = {**original_obj, "issues": original_obj["issues"][:3], "truncation": record}
        presented = {
            "content": [{"type": "text", "text": json.dumps(preview)}],
            "isError": False,
            "_meta": {"truncation": record},
        }
        return {**_answer(presented, "shrink"), "response_id": response_id, "original_response_file": file}

    def _rows(self, args: dict[str, Any], number: int) -> dict[str, Any]:
        rows = [
            {"table": args.get("table"), "row": i, "value": "x" * 20} for i in range(int(args.get("n", 500)))
        ]
        text = json.dumps(rows)
        original = {"content": [{"type": "text", "text": text}], "isError": False}
        with self.lock:
            earlier = self.seen_results.get(text)
            if earlier is None:
                self.seen_results[text] = (number, "list_rows")
        if earlier is None:
            return _answer(original, "passthrough")
        response_id, file = self.store(original)
        pointer = (
            f"[mcpsqueeze] identical to the result of call #{earlier[0]} (list_rows), "
            "4000 tokens not resent. "
            f"The tool did run again and returned exactly the same content. To see it again, run: "
            f"mcpsq recover {response_id}"
        )
        presented = {
            "content": [{"type": "text", "text": pointer}],
            "isError": False,
            "_meta": {
                "mcpsqueeze/dedup": {
                    "same_as_call": earlier[0],
                    "tool": "list_rows",
                    "response_id": response_id,
                    "original_response_file": file,
                }
            },
        }
        return {**_answer(presented, "dedup"), "response_id": response_id, "original_response_file": file}


def _answer(result: dict[str, Any], action: str) -> dict[str, Any]:
    return {"result": result, "action": action, "response_id": None, "original_response_file": None}


def _handler(session: Session) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        def _authorized(self) -> bool:
            if session.token is None:
                return True
            given = self.headers.get("Authorization", "")
            return hmac.compare_digest(given.encode(), f"Bearer {session.token}".encode())

        def _record(self, body: object) -> None:
            session.requests.append(
                {"method": self.command, "path": self.path, "body": body, "headers": dict(self.headers)}
            )

        def do_GET(self) -> None:
            self._record(None)
            if not self._authorized():
                return self._send(
                    401, {"error": {"code": "unauthorized", "message": "missing or wrong token"}}
                )
            if self.path == "/v1/servers":
                return self._send(200, session.servers())
            if self.path == "/v1/health":
                return self._send(503 if session.down else 200, {"servers": {"demo": "up"}})
            return self._send(404, {"error": {"code": "not_found", "message": self.path}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            self._record(body)
            if not self._authorized():
                return self._send(
                    401, {"error": {"code": "unauthorized", "message": "missing or wrong token"}}
                )
            if self.path != "/v1/call" or not isinstance(body, dict):
                return self._send(
                    400, {"error": {"code": "bad_request", "message": "expected a JSON object"}}
                )
            status, answer = session.call(body)
            return self._send(status, answer)

    return Handler


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class _TCPServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextmanager
def serve_unix(socket_path: Path, session: Session) -> Iterator[Session]:
    server = _UnixServer(str(socket_path), _handler(session))
    os.chmod(socket_path, 0o600)
    session.socket_path = socket_path
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield session
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serve_tcp(session: Session) -> Iterator[tuple[Session, int]]:
    server = _TCPServer(("127.0.0.1", 0), _handler(session))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield session, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
