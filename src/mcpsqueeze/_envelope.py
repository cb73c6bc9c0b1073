"""The MCP 2026-07-28 envelope, defined once: its version, its `_meta` keys, how a request is known to
carry it or has it taken off (towards a handshake-era backend), a request of our own in it, and the one
place a result we send a 2026-07-28 client is stamped with the fields that revision requires. Pure."""

from __future__ import annotations

from typing import Any

__all__ = [
    "HANDSHAKE_VERSION",
    "MODERN_VERSION",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "is_modern",
    "meta_of",
    "own_request",
    "stamped",
    "without_envelope",
]

MODERN_VERSION = "2026-07-28"
HANDSHAKE_VERSION = "2025-11-25"  # what we speak to a backend that does not answer server/discover
PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION = PREFIX + "protocolVersion"
CLIENT_CAPABILITIES = PREFIX + "clientCapabilities"
SERVER_INFO = PREFIX + "serverInfo"
SUBSCRIPTION_ID = PREFIX + "subscriptionId"
# Listings a 2026-07-28 client may cache: their results carry ttlMs and cacheScope.
CACHEABLE = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}
)


def meta_of(params: Any) -> dict[str, Any]:
    """The `_meta` of a request's params ({} when there is none)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def is_modern(params: Any) -> bool:
    """Whether a request's params carry the 2026-07-28 envelope (its protocol version in `_meta`)."""
    return PROTOCOL_VERSION in meta_of(params)


def own_request(method: str, params: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """A request of our own to a 2026-07-28 server over HTTP: its body (the envelope in `_meta`) and the
    headers that revision routes on."""
    params = {**(params or {}), "_meta": {PROTOCOL_VERSION: MODERN_VERSION, CLIENT_CAPABILITIES: {}}}
    body = {"jsonrpc": "2.0", "id": f"mcpsqueeze-{method}", "method": method, "params": params}
    headers = {
        "mcp-protocol-version": MODERN_VERSION,
        "mcp-method": method,
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
    }
    return body, headers


def without_envelope(params: dict[str, Any]) -> dict[str, Any]:
    """`params` with the envelope's `_meta` keys taken off (a handshake-era backend refuses them); the
    `_meta` itself goes when nothing else is in it."""
    meta = meta_of(params)
    if not any(key.startswith(PREFIX) for key in meta):
        return params
    kept = {key: value for key, value in meta.items() if not key.startswith(PREFIX)}
    stripped = {key: value for key, value in params.items() if key != "_meta"}
    return {**stripped, "_meta": kept} if kept else stripped


def stamped(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """A result for a 2026-07-28 client: its `resultType` (complete unless it says otherwise) and, on a
    listing, its cache fields (nothing cached unless the backend said so: its tools may change)."""
    extra: dict[str, Any] = {"resultType": result.get("resultType", "complete")}
    if method in CACHEABLE:
        extra["ttlMs"] = result.get("ttlMs", 0)
        extra["cacheScope"] = result.get("cacheScope", "private")
    return {**result, **extra}
