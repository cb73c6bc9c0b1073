"""OAuth 2.1 for URL backends, on the MCP SDK's client provider.

`mcpsqueeze auth login URL` runs the browser step once (discovery, registration, PKCE, the redirect on a
loopback port); tokens and the registered client are kept in one 0600 file per backend URL under `<user config
dir>/oauth/` (`MCPSQUEEZE_OAUTH_DIR` moves it), and `wrap`/`serve` refresh them without a browser. A token
that cannot be refreshed is a `BackendError` naming the login command, unless the `OAuthClient` allows a login
mid-session (`prompt`, or `fetch` for test servers: a 401, or a 403 `insufficient_scope` step-up). The client
is registered dynamically, pre-registered (`client_id` and a secret file), or a client ID metadata document
(CIMD).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import socket
import sys
import time
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from .._envelope import own_request
from .._errors import BackendError, MCPSqueezeError, UsageError, first_leaf
from .._trusted import read_trusted
from ..recovery import ensure_private_dir
from ..settings import OAuthClient

__all__ = [
    "FileTokenStorage",
    "LoginRequired",
    "backend_auth",
    "backend_client",
    "clear_tokens",
    "login",
    "oauth_dir",
    "preflight",
    "token_file",
]

log = logging.getLogger(__name__)

_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
CALLBACK_PATH = "/callback"


class LoginRequired(BackendError):
    """The backend wants an interactive OAuth login (none stored, or expired/revoked beyond refresh)."""


def oauth_dir() -> Path:
    explicit = os.environ.get("MCPSQUEEZE_OAUTH_DIR", "")
    if explicit:
        return Path(explicit)
    from .._paths import default_config_path

    return default_config_path().parent / "oauth"  # beside config.toml, in the user config directory


def token_file(url: str) -> Path:
    """One file per backend URL (its sha256: the URL itself may hold anything)."""
    return oauth_dir() / f"{hashlib.sha256(url.encode()).hexdigest()[:32]}.json"


class FileTokenStorage:
    """The SDK's `TokenStorage` on a 0600 JSON file, written atomically; keeps an absolute expiry."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = token_file(url)

    def read(self) -> dict[str, Any]:
        try:
            data = json.loads(
                read_trusted(self.path, "OAuth token file", private=True, follow=False) or b"{}"
            )
        except FileNotFoundError:
            return {}
        except ValueError:
            log.warning("OAuth token file %s is unreadable JSON; ignoring it", self.path)
            return {}
        return data if isinstance(data, dict) and data.get("server_url") == self.url else {}

    def write(self, data: dict[str, Any]) -> None:
        ensure_private_dir(self.path.parent)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        fd = os.open(tmp, _WRITE_FLAGS, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(json.dumps({**data, "server_url": self.url}, indent=1).encode())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    def expires_at(self) -> float | None:
        value = self.read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = self.read().get("tokens")
        return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None

    async def set_tokens(self, tokens: Any) -> None:
        data = self.read()
        data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        data["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        self.write(data)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        info = self.read().get("client_info")
        return OAuthClientInformationFull.model_validate(info) if isinstance(info, dict) else None

    async def set_client_info(self, client_info: Any) -> None:
        data = self.read()
        data["client_info"] = client_info.model_dump(mode="json", exclude_none=True)
        self.write(data)


def _token_auth_method(supported: list[str] | None, secret: str | None) -> str:
    """How a pre-registered client authenticates at the token endpoint: what the server supports,
    `client_secret_basic` first (RFC 8414's default when the server lists none)."""
    if secret is None:
        return "none"
    if not supported or "client_secret_basic" in supported:
        return "client_secret_basic"
    return "client_secret_post" if "client_secret_post" in supported else "client_secret_basic"


def _provider_class() -> Any:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull

    class _Provider(OAuthClientProvider):
        """The SDK's provider, plus: the stored token's expiry is restored (a restarted proxy refreshes
        instead of failing), and a pre-registered client is used as given instead of registering."""

        preregistered: OAuthClient | None = None

        async def _initialize(self) -> None:
            await super()._initialize()
            storage = self.context.storage
            if isinstance(storage, FileTokenStorage):
                self.context.token_expiry_time = storage.expires_at()
            client = self.preregistered
            if client is not None and client.client_id:
                stored = self.context.client_info
                method = (
                    stored.token_endpoint_auth_method
                    if stored is not None and stored.client_id == client.client_id
                    else None
                )
                if client.auth_method is not None:  # as the user says the client was registered
                    method = f"client_secret_{client.auth_method}"
                self.context.client_info = OAuthClientInformationFull(
                    client_id=client.client_id,
                    client_secret=client.client_secret(),
                    redirect_uris=self.context.client_metadata.redirect_uris,
                    token_endpoint_auth_method=method,
                )

        async def _choose_token_auth(self) -> None:
            info = self.context.client_info
            if self.preregistered is None or info is None or info.token_endpoint_auth_method is not None:
                return
            meta = self.context.oauth_metadata
            supported = meta.token_endpoint_auth_methods_supported if meta is not None else None
            info.token_endpoint_auth_method = _token_auth_method(supported, info.client_secret)
            if meta is not None:  # decided from the server's metadata: kept for refreshes after a restart
                record = info.model_copy(update={"client_secret": None})  # the secret itself is never stored
                await self.context.storage.set_client_info(record)

        async def _perform_authorization(self) -> Any:
            await self._choose_token_auth()
            return await super()._perform_authorization()

        async def _refresh_token(self) -> Any:
            await self._choose_token_auth()
            return await super()._refresh_token()

        async def _auth_flow(self, request: Any) -> Any:
            """The SDK's flow, plus: a 401 to the request itself while a refresh token is at hand (the
            server expired the access token before its `expires_at`) refreshes once and retries, before
            the SDK's answer to a 401 (authorize again: "log in again" for a proxy without a browser)."""
            flow = super()._auth_flow(request)
            retried = False
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    if (
                        outgoing is request
                        and response.status_code == 401
                        and not retried
                        and self.context.can_refresh_token()
                    ):
                        retried = True
                        await flow.aclose()
                        self.context.token_expiry_time = time.time() - 1  # expired, whatever was stored
                        flow = super()._auth_flow(request)  # refreshes first, then sends it again
                        outgoing = await flow.__anext__()
                        continue
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            finally:
                await flow.aclose()

    return _Provider


def _not_login_required(record: logging.LogRecord) -> bool:
    """The SDK logs the flow's exception with a traceback; ours ("log in again") and the flow's own
    errors (a token endpoint's refusal) are reported once, as a message, not logged."""
    from mcp.client.auth.exceptions import OAuthFlowError

    return not (record.exc_info and isinstance(record.exc_info[1], LoginRequired | OAuthFlowError))


def flow_error(url: str, exc: BaseException, provider: Any = None) -> MCPSqueezeError:
    """One of ours for an error of the SDK's OAuth flow. A token endpoint that refuses the client
    (HTTP 401, or `invalid_client`) is a usage problem: the client id, its secret or the way it is sent
    (`--oauth-auth-method`); anything else is the backend's OAuth failing (BackendError)."""
    from mcp.client.auth.exceptions import OAuthTokenError

    detail = str(exc)
    status = re.search(r"\((\d{3})\)", detail)
    if isinstance(exc, OAuthTokenError) and (
        (status is not None and status.group(1) == "401") or "invalid_client" in detail
    ):
        info = getattr(getattr(provider, "context", None), "client_info", None)
        method = getattr(info, "token_endpoint_auth_method", None) or "none"
        return UsageError(
            f"the authorization server of {url} refused this client at its token endpoint ({detail}); "
            f"the client authenticated with {method}: check --oauth-client-id, the secret file, and that "
            "--oauth-auth-method (basic or post) is how the client was registered"
        )
    return BackendError(f"OAuth with the backend at {url} failed: {detail}")


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _new_provider(
    url: str,
    storage: FileTokenStorage,
    redirect_uri: str,
    client: OAuthClient | None,
    redirect_handler: Any,
    callback_handler: Any,
) -> Any:
    from mcp.shared.auth import OAuthClientMetadata

    sdk_log = logging.getLogger("mcp.client.auth.oauth2")
    if _not_login_required not in sdk_log.filters:
        sdk_log.addFilter(_not_login_required)
    metadata = {
        "client_name": "mcpsqueeze",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    provider = _provider_class()(
        server_url=url,
        client_metadata=OAuthClientMetadata.model_validate(metadata),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client.client_metadata_url if client is not None else None,
    )
    if client is not None and client.client_id:
        provider.preregistered = client
    return provider


def backend_auth(url: str, headers: Mapping[str, str] | None, client: OAuthClient | None) -> Any:
    """The httpx2 auth for a URL backend: OAuth with the stored tokens; when an Authorization header is given,
    that header as is (a 401 to it a `LoginRequired` naming it). With `client.login == "never"` a new
    authorization the server wants stops the flow with `LoginRequired`; "prompt"/"fetch" authorize in
    place."""
    if headers and any(k.lower() == "authorization" for k in headers):
        return _given_authorization(url)
    storage = FileTokenStorage(url)
    info = storage.read().get("client_info")
    stored = (info or {}).get("redirect_uris") or []
    mode = client.login if client is not None else "never"
    if mode != "never":
        port = urllib.parse.urlsplit(str(stored[0])).port if stored else None
        redirect = _LoopbackRedirect(
            url,
            port or _free_loopback_port(),
            fetch=mode == "fetch",
            timeout=client.timeout if client else 300.0,
        )
        return _new_provider(url, storage, redirect.redirect_uri, client, redirect.show, redirect.wait)

    async def no_browser(authorization_url: str) -> None:
        had = storage.read().get("tokens") is not None
        what = (
            "its OAuth token expired or was revoked, or an operation needs a wider scope"
            if had
            else "it requires an OAuth login"
        )
        raise LoginRequired(
            f"the backend at {url} refused the request: {what}; run `mcpsqueeze auth login {url}` "
            "(then restart this proxy), or let the proxy authorize by itself with --oauth-login prompt"
        )

    async def no_callback() -> Any:
        raise LoginRequired(f"the backend at {url} needs `mcpsqueeze auth login {url}`")

    redirect_uri = str(stored[0]) if stored else f"http://127.0.0.1{CALLBACK_PATH}"
    return _new_provider(url, storage, redirect_uri, client, no_browser, no_callback)


def backend_client(
    url: str, headers: Mapping[str, str], timeout: float | None, client: OAuthClient | None
) -> Any:
    """A URL backend's httpx2 client: `backend_auth`, no redirect followed, reads bounded by `timeout`."""
    import httpx2

    return httpx2.AsyncClient(
        headers=dict(headers),
        timeout=httpx2.Timeout(30.0, read=timeout or 300.0),
        follow_redirects=False,
        auth=backend_auth(url, headers, client),
    )


def _given_authorization(url: str) -> Any:
    """The Authorization header the user gave, sent unchanged; a 401 to it ends the connection with a
    `LoginRequired` naming the status, as a refused OAuth token does (the SDK's transport alone would
    answer each request "Server returned an error response" and go on)."""
    import httpx2

    class GivenAuthorization(httpx2.Auth):
        def auth_flow(self, request: Any) -> Any:
            response = yield request
            if response.status_code == 401:
                challenge = response.headers.get("www-authenticate", "")
                raise LoginRequired(
                    f"the backend at {url} refused the Authorization header it was given (HTTP 401"
                    + (f", {challenge}" if challenge else "")
                    + "); check the token in the header (-H Authorization=..., or the servers entry's "
                    f"headers), or leave the header out to use OAuth (`mcpsqueeze auth login {url}`)"
                )

    return GivenAuthorization()


async def preflight(url: str, headers: Mapping[str, str], client: OAuthClient | None = None) -> None:
    """Before serving a URL backend: it must be reachable (a BackendError naming the URL, else), and with
    OAuth one authenticated request refreshes an expired token, or fails with LoginRequired.

    The request is a 2026-07-28 `server/discover`, which creates no session on any server.
    """
    import httpx2

    await anyio.to_thread.run_sync(_check_reachable, url)
    auth = backend_auth(url, headers, client)
    body, routing = own_request("server/discover")
    async with httpx2.AsyncClient(auth=auth, timeout=30.0) as http:
        try:
            response = await http.post(url, json=body, headers={**headers, **routing})
        except Exception as exc:  # an auth-flow failure (metadata, refresh) other than "log in again"
            leaf = first_leaf(exc)
            if isinstance(leaf, LoginRequired):
                raise leaf from None
            raise flow_error(url, leaf, auth) from exc
    challenge = response.headers.get("www-authenticate", "")
    if response.status_code == 403 and "insufficient_scope" in challenge:
        raise LoginRequired(
            f"the backend at {url} still refuses the OAuth token after authorizing: insufficient scope "
            f"({challenge}); the authorization server did not grant what the backend asks for"
        )
    if response.status_code in (401, 403):
        raise LoginRequired(
            f"the backend at {url} refused the stored OAuth token (HTTP {response.status_code}); "
            f"run `mcpsqueeze auth login {url}`"
        )


def _check_reachable(url: str) -> None:
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "localhost", port), timeout=5.0):
            pass
    except OSError as exc:
        raise BackendError(
            f"cannot reach the backend at {url}: {exc.strerror or exc}; "
            "check the URL and that the server runs"
        ) from exc


def clear_tokens(url: str | None) -> list[Path]:
    """Delete the stored tokens of one backend URL, or all of them; the deleted files."""
    paths = [token_file(url)] if url is not None else sorted(oauth_dir().glob("*.json"))
    removed = []
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


# -- the browser step -----------------------------------------------------------------------------------


class _LoopbackRedirect:
    """The browser step for the SDK provider: show the authorization URL, accept the redirect on
    127.0.0.1:PORT. The listener exists only while an authorization is under way."""

    def __init__(self, url: str, port: int, *, fetch: bool, timeout: float) -> None:
        self.url = url
        self.port = port
        self.fetch = fetch
        self.timeout = timeout
        self.redirect_uri = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
        self._listener: Any = None
        self._shown = ""
        self._got: dict[str, str] = {}
        self._done = anyio.Event()

    async def _accept(self) -> None:
        """Serve the loopback redirect: the first GET of the callback path carrying code (or error) wins."""
        async with anyio.create_task_group() as tg:
            while not self._done.is_set():
                tg.start_soon(self._one, await self._listener.accept())
            tg.cancel_scope.cancel()

    async def _one(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            request = b""  # read whole before answering (unread bytes would reset the connection)
            with anyio.move_on_after(10), contextlib.suppress(anyio.IncompleteRead, anyio.DelimiterNotFound):
                request = await BufferedByteReceiveStream(stream).receive_until(b"\r\n\r\n", 65536)
            line = request.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split(" ")
            target = urllib.parse.urlsplit(parts[1]) if len(parts) >= 2 else None
            query = dict(urllib.parse.parse_qsl(target.query)) if target else {}
            if target is None or target.path != CALLBACK_PATH or not ({"code", "error"} & query.keys()):
                await stream.send(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            ok = "code" in query
            body = (
                b"mcpsqueeze: login complete; you can close this window.\n"
                if ok
                else b"mcpsqueeze: the authorization server refused the login.\n"
            )
            head = (
                f"HTTP/1.1 {200 if ok else 400} OK\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}"
            )
            await stream.send(head.encode() + b"\r\nConnection: close\r\n\r\n" + body)
            if not self._done.is_set():
                self._got.update(query)
                self._done.set()

    async def listen(self) -> None:
        if self._listener is not None:
            return
        self._got, self._done = {}, anyio.Event()
        try:
            listeners = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        except OSError as exc:
            raise BackendError(
                f"cannot accept the OAuth redirect on 127.0.0.1:{self.port}: {exc.strerror or exc}"
            ) from exc
        self._listener = listeners.listeners[0]

    async def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.aclose()

    async def show(self, authorization_url: str) -> None:
        await self.listen()
        self._shown = authorization_url
        print(
            f"mcpsqueeze: open this URL in a browser to authorize access to {self.url}:\n{authorization_url}",
            file=sys.stderr,
            flush=True,
        )

    async def wait(self) -> Any:
        import httpx2
        from mcp.shared.auth import AuthorizationCodeResult

        try:
            await self.listen()
            with anyio.move_on_after(self.timeout):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._accept)
                    if self.fetch:  # headless: a server that approves without a person redirects at once
                        async with httpx2.AsyncClient(timeout=30.0, follow_redirects=True) as browser:
                            with contextlib.suppress(httpx2.HTTPError):
                                await browser.get(self._shown)
                    await self._done.wait()
                    tg.cancel_scope.cancel()
        finally:
            await self.close()
        got = self._got
        if not self._done.is_set():
            raise LoginRequired(
                f"no OAuth redirect for {self.url} arrived within {self.timeout:g} s; "
                f"run `mcpsqueeze auth login {self.url}`"
            )
        if "code" not in got:
            raise BackendError(f"the authorization server refused the login: {got.get('error', 'no code')}")
        return AuthorizationCodeResult(code=got["code"], state=got.get("state"), iss=got.get("iss"))


async def login(
    url: str,
    *,
    port: int = 0,
    timeout: float = 300.0,
    headers: Mapping[str, str] | None = None,
    fetch: bool = False,
    client: OAuthClient | None = None,
) -> str:
    """Authorize mcpsqueeze for `url` and store the tokens; returns the token file path."""
    import httpx2

    storage = FileTokenStorage(url)
    storage.write({})  # a fresh registration: the loopback port (part of the redirect URI) differs per login
    redirect = _LoopbackRedirect(url, port or _free_loopback_port(), fetch=fetch, timeout=timeout)
    await redirect.listen()  # a busy --port fails here, before anything is asked of the servers
    provider = _new_provider(url, storage, redirect.redirect_uri, client, redirect.show, redirect.wait)
    probe = {
        "jsonrpc": "2.0",
        "id": "mcpsqueeze-login",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcpsqueeze", "version": "login"},
        },
    }
    from mcp.client.auth.exceptions import OAuthFlowError

    try:
        async with httpx2.AsyncClient(auth=provider, headers=dict(headers or {}), timeout=30.0) as http:
            try:
                response = await http.post(
                    url, json=probe, headers={"accept": "application/json, text/event-stream"}
                )
            except httpx2.HTTPError as exc:
                raise BackendError(f"cannot reach the backend at {url}: {exc}") from exc
    except OAuthFlowError as exc:
        raise flow_error(url, exc, provider) from None
    finally:
        await redirect.close()
    if response.status_code in (401, 403):
        raise BackendError(f"the backend at {url} still refuses the login (HTTP {response.status_code})")
    if await storage.get_tokens() is None:
        raise BackendError(
            f"the backend at {url} did not ask for OAuth (HTTP {response.status_code}); nothing stored"
        )
    return str(storage.path)
