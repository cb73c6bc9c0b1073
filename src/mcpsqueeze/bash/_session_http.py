"""Finding the session and talking to it: the subset of HTTP/1.1 the session API needs (one request per
connection, ``Content-Length`` or chunked bodies) over a Unix socket or loopback TCP, on ``_socket`` and
``._fastjson``: ``http.client`` alone would cost ~30 ms of the shim's start. The TCP token is read from its
file for each request and never printed.
"""

from __future__ import annotations

import _socket
import os

from mcpsqueeze._errors import BackendError, BackendFailure, UsageError
from mcpsqueeze._net import is_loopback
from mcpsqueeze._paths import recovery_dir_in as default_recovery_dir
from mcpsqueeze._paths import socket_candidates as default_socket_candidates

from ._fastjson import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "SessionAddress",
    "SessionClient",
    "SessionTimeout",
    "SessionUnreachable",
    "default_recovery_dir",
    "default_socket_candidates",
    "locate_session",
]

DEFAULT_CALL_TIMEOUT = 600.0
CONNECT_TIMEOUT = 5.0
_START_HINT = (
    "Start the session with `mcpsqueeze serve --config servers.json` (or `mcpsqueeze serve -n NAME -- "
    "COMMAND...`), or set MCPSQUEEZE_SOCKET to the socket it listens on "
    "(or MCPSQUEEZE_URL and MCPSQUEEZE_TOKEN_FILE for TCP)."
)


class SessionUnreachable(BackendError):
    """No session answers where we looked (exit 3)."""


class SessionTimeout(BackendFailure):
    """The session took longer than the timeout (exit 4)."""


class SessionAddress:
    """A Unix socket path, or a loopback host/port plus the token file."""

    def __init__(
        self,
        *,
        socket_path: str | None = None,
        host: str | None = None,
        port: int | None = None,
        token_file: str | None = None,
    ) -> None:
        self.socket_path = socket_path
        self.host = host
        self.port = port
        self.token_file = token_file

    def describe(self) -> str:
        if self.socket_path is not None:
            return f"unix socket {self.socket_path}"
        return f"http://{self.host}:{self.port}"


def _parse_url(url: str) -> tuple[str, int]:
    if not url.startswith("http://"):
        raise UsageError(
            f"MCPSQUEEZE_URL={url!r} must look like http://127.0.0.1:PORT (the session listens on "
            "loopback only); fix or unset it."
        )
    hostport = url[len("http://") :].split("/", 1)[0]
    host, sep, port_text = hostport.rpartition(":")
    if not sep or not port_text.isdigit():
        raise UsageError(f"MCPSQUEEZE_URL={url!r} has no port; use http://127.0.0.1:PORT.")
    if not is_loopback(host):
        raise UsageError(
            f"MCPSQUEEZE_URL={url!r} is not a loopback address; the shim sends the session token only to "
            "127.0.0.1, ::1 or localhost. Fix or unset it."
        )
    return host.strip("[]"), int(port_text)


def locate_session(environ: Mapping[str, str]) -> SessionAddress:
    """MCPSQUEEZE_SOCKET, else MCPSQUEEZE_URL (+ MCPSQUEEZE_TOKEN_FILE), else the default socket."""
    sock = environ.get("MCPSQUEEZE_SOCKET", "")
    if sock:
        return SessionAddress(socket_path=sock)
    url = environ.get("MCPSQUEEZE_URL", "")
    candidates = default_socket_candidates(environ)
    if url:
        host, port = _parse_url(url)
        token_file = environ.get("MCPSQUEEZE_TOKEN_FILE", "") or os.path.join(
            os.path.dirname(candidates[0]), "token"
        )
        return SessionAddress(host=host, port=port, token_file=token_file)
    for candidate in candidates:
        if os.path.exists(candidate):
            return SessionAddress(socket_path=candidate)
    raise SessionUnreachable(
        "No mcpsqueeze session found: no socket at " + ", ".join(candidates) + ". " + _START_HINT
    )


def _read_token(path: str) -> str:
    try:
        with open(path, encoding="ascii") as handle:
            token = handle.read().strip()
    except OSError as exc:
        raise SessionUnreachable(
            f"Cannot read the session token file {path} ({exc.strerror}). Set MCPSQUEEZE_TOKEN_FILE to "
            "the token file `mcpsqueeze serve --listen` wrote (--token-file)."
        ) from None
    except UnicodeDecodeError:
        raise SessionUnreachable(
            f"The session token file {path} is not a hex token; check --token-file."
        ) from None
    if not token:
        raise SessionUnreachable(
            f"The session token file {path} is empty; restart `mcpsqueeze serve --listen`."
        )
    return token


def _recv_until(sock: _socket.socket, data: bytearray, done: Callable[[bytearray], bool]) -> None:
    """Receive into ``data`` until ``done(data)``; ConnectionError when the session closes first."""
    while not done(data):
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("the session closed the connection mid-answer")
        data += chunk


def _exchange(sock: _socket.socket, request: bytes) -> tuple[int, bytes]:
    """Send one request; the answer's status and body (``Content-Length``, chunked, or up to the close
    that ``Connection: close`` asks for; interim 100 answers skipped)."""
    sock.sendall(request)
    data = bytearray()
    while True:
        _recv_until(sock, data, lambda d: b"\r\n\r\n" in d or len(d) > 65536)
        head, sep, rest = bytes(data).partition(b"\r\n\r\n")
        status_line, *lines = head.split(b"\r\n")
        parts = status_line.split(b" ", 2)
        if not sep or len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            raise ConnectionError(f"the session sent a malformed status line {status_line[:80]!r}")
        data = bytearray(rest)
        if parts[1] != b"100":
            break
    headers = {name.strip().lower(): value.strip() for name, _, value in (h.partition(b":") for h in lines)}
    status = int(parts[1])
    chunked = b"chunked" in headers.get(b"transfer-encoding", b"").lower()
    length = headers.get(b"content-length", b"")
    if length.isdigit() and not chunked:
        _recv_until(sock, data, lambda d: len(d) >= int(length))
        return status, bytes(data[: int(length)])
    while chunk := sock.recv(1 << 20):
        data += chunk
    if not chunked:
        return status, bytes(data)
    body, at = bytearray(), 0
    while True:
        eol = data.index(b"\r\n", at)
        size = int(data[at:eol].split(b";", 1)[0], 16)
        if size == 0:
            return status, bytes(body)
        body += data[eol + 2 : eol + 2 + size]
        at = eol + 4 + size


class SessionClient:
    """Blocking requests to the session API; one connection per request (the session is local)."""

    def __init__(self, address: SessionAddress) -> None:
        self.address = address

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> SessionClient:
        return cls(locate_session(os.environ if environ is None else environ))

    def _connect(self) -> _socket.socket:
        """The Unix socket, else the first of the addresses the loopback name resolves to that accepts (as
        ``socket.create_connection`` does; importing ``socket`` would slow every command)."""
        address = self.address
        try:
            if address.socket_path is not None:
                targets: list[tuple[int, str | tuple[object, ...]]] = [(_socket.AF_UNIX, address.socket_path)]
            else:
                found = _socket.getaddrinfo(address.host, address.port, 0, _socket.SOCK_STREAM)
                targets = [(family, where) for family, _type, _proto, _name, where in found]
            errors: list[OSError] = []
            for family, where in targets:
                sock = _socket.socket(family, _socket.SOCK_STREAM)
                sock.settimeout(CONNECT_TIMEOUT)
                try:
                    sock.connect(where)
                    return sock
                except OSError as exc:
                    sock.close()
                    errors.append(exc)
            raise errors[0] if errors else OSError(f"{address.host} resolves to no address")
        except TimeoutError:
            raise SessionUnreachable(
                f"The mcpsqueeze session at {address.describe()} did not accept the connection in time. "
                + _START_HINT
            ) from None
        except OSError as exc:
            raise SessionUnreachable(
                f"Cannot reach the mcpsqueeze session at {address.describe()} ({exc.strerror or exc}). "
                + _START_HINT
            ) from None

    def request(
        self, method: str, path: str, body: object = None, *, timeout: float | None = 30.0
    ) -> tuple[int, object]:
        """Send one request; return the status and the decoded JSON body (None when not JSON)."""
        address = self.address
        try:
            text = "" if body is None else dumps(body, ensure_ascii=False, allow_nan=False)
        except ValueError:
            raise UsageError(
                "the input holds a number JSON cannot carry (NaN or infinity, e.g. 1e999); "
                "pass a finite number."
            ) from None
        try:
            payload = text.encode("utf-8")
        except UnicodeEncodeError as exc:  # bytes an argument held that are not UTF-8 (or a lone surrogate)
            near = exc.object[max(0, exc.start - 20) : exc.end + 20]
            try:
                shown = near.encode("utf-8", "surrogateescape")  # the bytes as they were given
            except UnicodeEncodeError:
                shown = near.encode("utf-8", "backslashreplace")
            raise UsageError(
                f"the input holds text that is not UTF-8 (near {shown!r}); pass arguments as UTF-8 text."
            ) from None
        host = "localhost" if address.socket_path is not None else f"{address.host}:{address.port}"
        lines = [
            f"{method} {path} HTTP/1.1",
            f"Host: {host}",
            "Connection: close",
            "Accept: application/json",
            "User-Agent: mcpsq",
        ]
        if body is not None or method == "POST":
            lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
        if address.token_file is not None:
            lines.append(f"Authorization: Bearer {_read_token(address.token_file)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        sock = self._connect()
        try:
            sock.settimeout(timeout)
            status, raw = _exchange(sock, head + payload)
        except TimeoutError:
            raise SessionTimeout(
                f"The mcpsqueeze session at {address.describe()} did not answer within {timeout:g} s. "
                "Retry, or set MCPSQUEEZE_TIMEOUT (seconds) higher for slow tools."
            ) from None
        except (OSError, ValueError) as exc:
            raise SessionUnreachable(
                f"The mcpsqueeze session at {address.describe()} dropped the connection ({exc}). "
                "Check that `mcpsqueeze serve` is still running, then retry."
            ) from None
        finally:
            sock.close()
        try:
            decoded: object = loads(raw) if raw else None
        except ValueError:
            decoded = None
        return status, decoded
