"""Bearer tokens for local TCP endpoints: 256 random bits in a 0600 file, checked in constant time."""

from __future__ import annotations

import contextlib
import errno
import hmac
import ipaddress
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from ._errors import UsageError
from .recovery import ensure_private_dir
from .recovery._files import check_private_dir

__all__ = ["bearer_guard", "check_token_path", "is_loopback", "load_or_create_token"]

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted at the path returns at once (and is refused) instead of hanging.
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def is_loopback(host: str) -> bool:
    """True for an address (or "localhost") that only this machine can reach."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_token_path(path: Path) -> None:
    """Refuse an unusable token path before anything is created: an unsafe directory, a symlink or
    any other non-regular file (a FIFO would hang a reader). A missing file is fine: it is made later."""
    parent = Path(os.path.abspath(path.parent))
    with contextlib.suppress(FileNotFoundError):
        check_private_dir(os.lstat(parent), parent, "token directory")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(_symlink_message(path))
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"token file {path} must be a regular 0600 file of ours")


def _symlink_message(path: Path) -> str:
    return (
        f"token file {path} is a symlink; refusing to follow it. "
        "Point --token-file at the real file, or delete the link to get a new token."
    )


def load_or_create_token(path: Path) -> bytes:
    """The token in `path`, created (0600, in a private directory) when missing; never in argv or env."""
    ensure_private_dir(path.parent, what="token directory")
    try:
        fd = os.open(path, _CREATE, 0o600)
    except FileExistsError:
        return _read_token(path)
    except OSError as exc:
        raise UsageError(
            f"cannot create the token file {path}: {exc.strerror or exc}; choose another --token-file"
        ) from None
    token = secrets.token_hex(32).encode()
    with os.fdopen(fd, "wb") as fh:
        fh.write(token + b"\n")
    return token


def _read_token(path: Path) -> bytes:
    try:
        fd = os.open(path, _READ)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(_symlink_message(path)) from None
        raise UsageError(f"cannot read the token file {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise UsageError(f"token file {path} must be a regular 0600 file of ours") from None
        token = fh.read().strip()
    if len(token) < 32:
        raise UsageError(f"token file {path} holds no usable token; delete it to make a new one") from None
    return token


def bearer_guard(app: Any, token: bytes) -> Any:
    """ASGI gate in front of everything: a request without the token never reaches the app (or a backend)."""
    refusal = json.dumps(
        {
            "error": {
                "code": "unauthorized",
                "message": "missing or wrong bearer token; read it from the token file",
            }
        }
    ).encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            supplied = b""
            for key, value in scope.get("headers", []):
                if key == b"authorization" and value[:7].lower() == b"bearer ":
                    supplied = value[7:].strip()
            if not hmac.compare_digest(supplied, token):
                headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": refusal})
                return
        await app(scope, receive, send)

    return guarded
