"""A real `mcpsqueeze serve` on loopback TCP with a token file, and calls to its session API.

Shared by the serve tests that speak HTTP to the API (recover by query and by lines, tenants).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rawclient import cli, serve_ready


def write_token(path: Path, text: str | None = None) -> str:
    """A fresh bearer token written to `path` as serve requires (0600, created exclusively); or `text`
    as the file's content (a tenants file) when given. Returns the token or the text."""
    content = secrets.token_hex(32) if text is None else text
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, content.encode())
    finally:
        os.close(fd)
    return content


@contextlib.contextmanager
def running_serve(*args: str) -> Iterator[str]:
    """serve with `args` (listening on `--listen 127.0.0.1:0`), yielded as its base URL once it says it is
    ready; stopped with SIGTERM at the end."""
    proc = subprocess.Popen(cli("serve", *args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    try:
        seen = serve_ready(proc)
        yield seen.split("session ready on ", 1)[1].split(";", 1)[0]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


@contextlib.contextmanager
def serve_in_process(*args: str) -> Iterator[str]:
    """`running_serve`'s serve, run in this process (memwrap.Serve: the CLI's own parsing, the same session
    API on a loopback port) with its demo server backends in-process too; stopped as SIGTERM would."""
    from memwrap import Serve

    with Serve(args) as served:
        yield served.where


def api(url: str, token: str, path: str, body: dict[str, Any] | bytes | None = None) -> tuple[int, Any]:
    """GET `path` (POST when there is a body: an object, or bytes sent as they are) with the bearer token:
    (status, parsed JSON body)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{url}{path}", data=data, method="POST" if data else "GET")
    request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
