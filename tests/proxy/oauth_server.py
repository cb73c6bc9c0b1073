"""A local OAuth 2.1 authorization server + protected MCP server, on the SDK's server auth support.

Dynamic client registration, PKCE, refresh-token rotation; the authorize step approves at once (the test
drives the authorize URL with an HTTP client instead of a browser). Test-only routes:
`POST /test/revoke` revokes every token, `POST /test/expire` makes every access token expired now.

    python tests/proxy/oauth_server.py --port 0 --token-ttl 3600   # prints "LISTENING http://127.0.0.1:PORT/mcp"

`--client ID,SECRET,METHOD,REDIRECT_URI` pre-registers a confidential client that must authenticate at
the token endpoint with METHOD (client_secret_basic or client_secret_post), as a server without dynamic
registration would have it registered.

`running(...)` serves the same app from a thread of the calling process (a test), on a loopback port it
binds itself: a server process costs ~0.7 s of CPU importing the SDK, which the test process has already.

Not a test module (no test_ prefix).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import secrets
import socket
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

from mcp.server import MCPServer
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import JSONResponse


class MemoryProvider:
    def __init__(self, token_ttl: int) -> None:
        self.token_ttl = token_ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.counts = {"authorize": 0, "code": 0, "refresh": 0, "register": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.counts["register"] += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.counts["authorize"] += 1
        code = secrets.token_urlsafe(32)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="alice",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.token_ttl,
            resource=resource,
            subject="alice",
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject="alice"
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_ttl,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.counts["code"] += 1
        self.codes.pop(authorization_code.code, None)
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.counts["refresh"] += 1
        self.refresh.pop(refresh_token.token, None)  # rotation
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def build(port: int, token_ttl: int, clients: list[str] | None = None) -> tuple[Any, MemoryProvider]:
    base = f"http://127.0.0.1:{port}"
    provider = MemoryProvider(token_ttl)
    for given in clients or []:
        client_id, secret, method, redirect_uri = given.split(",", 3)
        provider.clients[client_id] = OAuthClientInformationFull.model_validate(
            {
                "client_id": client_id,
                "client_secret": secret,
                "token_endpoint_auth_method": method,
                "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
            }
        )
    app = MCPServer(
        name="oauth-protected",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(enabled=True),
            revocation_options=RevocationOptions(enabled=True),
            validate_token_resource=False,
        ),
    )

    @app.tool()
    def whoami() -> str:
        """Says that the call was authorized."""
        return "authorized"

    @app.tool(structured_output=False)
    def big_listing(n: int = 2000) -> str:
        """A large JSON result, for shrinking through an OAuth backend."""
        return json.dumps({"items": [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(n)]})

    @app.custom_route("/test/revoke", methods=["POST"])
    async def revoke_all(request: Request) -> JSONResponse:
        count = len(provider.access) + len(provider.refresh)
        provider.access.clear()
        provider.refresh.clear()
        return JSONResponse({"revoked": count})

    @app.custom_route("/test/expire", methods=["POST"])
    async def expire_all(request: Request) -> JSONResponse:
        for token in provider.access.values():
            token.expires_at = int(time.time()) - 1
        return JSONResponse({"expired": len(provider.access)})

    @app.custom_route("/test/counts", methods=["GET"])
    async def counts(request: Request) -> JSONResponse:
        return JSONResponse(provider.counts)

    return app, provider


@contextlib.contextmanager
def running(token_ttl: int = 3600, clients: Sequence[str] = ()) -> Iterator[str]:
    """This server in a thread, until the block ends; its MCP URL (`http://127.0.0.1:PORT/mcp`)."""
    from memwrap import asgi_on_loopback

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    app, _ = build(port, token_ttl, list(clients))
    with asgi_on_loopback(app.streamable_http_app(host="127.0.0.1"), sock) as base:
        yield f"{base}/mcp"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--token-ttl", type=int, default=3600)
    ap.add_argument("--client", action="append", default=[], help="ID,SECRET,METHOD,REDIRECT_URI")
    args = ap.parse_args(argv)
    import uvicorn

    port = args.port
    if not port:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
    app, _ = build(port, args.token_ttl, args.client)
    starlette_app = app.streamable_http_app(host="127.0.0.1")
    print(f"LISTENING http://127.0.0.1:{port}/mcp", flush=True)
    uvicorn.run(starlette_app, host="127.0.0.1", port=port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
