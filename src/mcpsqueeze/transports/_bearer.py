"""Bearer tokens for local TCP endpoints: 256 random bits in a 0600 file, checked in constant time."""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import UsageError
from .._trusted import read_trusted
from ..recovery import check_if_present, ensure_private_dir, readable_by_others

__all__ = [
    "PRINCIPAL_KEY",
    "Tokens",
    "bearer_guard",
    "check_token_path",
    "load_tokens",
    "token_principal",
    "warn_if_readable",
]

logger = logging.getLogger(__name__)

PRINCIPAL_KEY = "mcpsqueeze.principal"  # ASGI scope key: the principal of the request's bearer token
_TENANT_RE = re.compile(rb"^[A-Za-z0-9_.@-]{1,64}\Z")

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def check_token_path(path: Path) -> None:
    """Refuse an unusable token path before anything is created: an unsafe directory, a symlink or
    any other non-regular file (a FIFO would hang a reader). A missing file is fine: it is made later."""
    check_if_present(path.parent, "token directory")
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


@dataclass(frozen=True)
class Tokens:
    """Accepted bearer tokens and the principal (tenant) each one stands for."""

    principals: Mapping[bytes, str]
    named: bool  # the file names tenants (`tenant:token` lines): one process serves several tenants


def token_principal(token: bytes) -> str:
    """The principal of a plain token: derived from its hash, so the token itself is never a key."""
    import hashlib  # (lazily, like hmac and secrets: stdio start-up needs none of them)

    return "token-" + hashlib.sha256(token).hexdigest()[:16]


def load_tokens(path: Path) -> Tokens:
    """The tokens in `path`: `tenant:token` lines (blank lines and `#` comments allowed) give each tenant its
    own token; one plain token is one principal (its hash). A missing file is created (0600, in a private
    directory) with one new token; a token is never in argv or env."""
    ensure_private_dir(path.parent, what="token directory")
    warn_if_readable(path.parent, "token directory")
    try:
        fd = os.open(path, _CREATE, 0o600)
    except FileExistsError:
        raw = _read_token(path)  # refuses links and FIFOs, checks its owner and mode
    except OSError as exc:
        raise UsageError(
            f"cannot create the token file {path}: {exc.strerror or exc}; choose another --token-file"
        ) from None
    else:
        import secrets

        raw = secrets.token_hex(32).encode()
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw + b"\n")
    lines = [line.strip() for line in raw.splitlines()]
    lines = [line for line in lines if line and not line.startswith(b"#")]
    if len(lines) == 1 and b":" not in lines[0]:
        return Tokens({lines[0]: token_principal(lines[0])}, named=False)
    principals: dict[bytes, str] = {}
    for line in lines:
        name, sep, token = line.partition(b":")
        if not sep or not _TENANT_RE.match(name) or len(token) < 32:
            raise UsageError(
                f"token file {path}: each line must be TENANT:TOKEN (tenant: letters, digits, _.@-, at most "
                "64; token: at least 32 characters, e.g. from `openssl rand -hex 32`)"
            )
        if token in principals:
            raise UsageError(f"token file {path}: one token is given to two tenants; give each its own")
        principals[token] = name.decode()
    return Tokens(principals, named=True)


def warn_if_readable(directory: Path, what: str) -> None:
    """A socket or token directory the user chose that others can read: used, with a warning (ours,
    the default one, is made 0700 by `serve` itself)."""
    warning = readable_by_others(directory, what, "see the session's socket or token file there")
    if warning:
        logger.warning(f"mcpsqueeze: warning: {warning}")


def _read_token(path: Path) -> bytes:
    """The token file's token, through the one check every trusted file gets (`_trusted`): a regular file
    of ours (or root's), not a symlink, 0600 or narrower, in a directory no other user can write."""
    try:
        data = read_trusted(path, "token file", private=True, follow=False)
    except FileNotFoundError:
        raise UsageError(f"cannot read the token file {path}: it was removed meanwhile") from None
    except UsageError as exc:
        if os.path.islink(path):
            raise UsageError(_symlink_message(path)) from None
        raise UsageError(f"{exc} The token file must be a regular 0600 file of ours.") from None
    token = data.strip()
    if len(token) < 32:
        raise UsageError(f"token file {path} holds no usable token; delete it to make a new one") from None
    return token


def bearer_guard(app: Any, tokens: Tokens) -> Any:
    """ASGI gate in front of everything: a request without the token never reaches the app (or a backend).

    The app finds the caller's principal in `scope[PRINCIPAL_KEY]`.
    """
    refusal = (
        b'{"error": {"code": "unauthorized", '
        b'"message": "missing or wrong bearer token; read it from the token file"}}'
    )
    import hmac

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            supplied = b""
            for key, value in scope.get("headers", []):
                if key == b"authorization" and value[:7].lower() == b"bearer ":
                    supplied = value[7:].strip()
            principal = None
            for known, name in tokens.principals.items():  # every token compared, in constant time each
                if hmac.compare_digest(supplied, known):
                    principal = name
            if principal is None:
                headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": refusal})
                return
            scope = {**scope, PRINCIPAL_KEY: principal}
        await app(scope, receive, send)

    return guarded
