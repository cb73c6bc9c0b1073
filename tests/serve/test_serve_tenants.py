"""serve's TCP API with a token file naming tenants and a real Redis store: one tenant never sees another's."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from rawclient import cli, free_port
from realservers import needs_redis, redis_server

pytestmark = needs_redis

BACKEND = [sys.executable, str(Path(__file__).parents[1] / "proxy" / "pages_backend.py")]


def _api(port: int, token: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=data, method="POST" if data else "GET"
    )
    request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_serve_keeps_each_named_tenants_originals_and_dedup_index_apart(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir(mode=0o700)
    alice, bob = secrets.token_hex(32), secrets.token_hex(32)
    tokens = secret / "tokens"
    fd = os.open(tokens, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, f"alice:{alice}\nbob:{bob}\n".encode())
    os.close(fd)
    with redis_server(tmp_path) as redis:
        port = free_port()
        argv = cli(
            "serve", "--recovery-dir", str(tmp_path / "rec"), "--budget", "2000", "--recovery-url", redis.url,
            "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens), "-n", "pages", "--", *BACKEND,
        )  # fmt: skip
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        try:
            seen = ""
            while "session ready on" not in seen:
                line = proc.stderr.readline()
                assert line, seen
                seen += line
            call = {"server": "pages", "tool": "page", "arguments": {"key": "k", "size": 6000}}
            status, first = _api(port, alice, "/v1/call", call)
            assert status == 200 and first["action"] == "shrink", first
            rid = first["response_id"]
            status, again = _api(port, bob, "/v1/call", call)
            assert status == 200 and again["action"] == "shrink"  # not deduplicated against alice's
            status, mine = _api(port, alice, f"/v1/recover/{rid}")
            assert status == 200
            assert mine["result"]["content"][0]["text"].startswith('[{"key": "k"')
            status, theirs = _api(port, bob, f"/v1/recover/{rid}")
            assert status == 404 and '"key": "k"' not in json.dumps(theirs)
            status, repeat = _api(port, alice, "/v1/call", call)
            # The shell door never deduplicates (stdout must carry data); the dedup index's tenant
            # isolation is tested through wrap (tests/proxy/test_wrap_replicas.py) and the Redis store.
            assert repeat["action"] == "shrink" and repeat["response_id"] != rid
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)
