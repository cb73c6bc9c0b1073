"""Settings: everything a session runs with, one plain object (no I/O): the session-wide rows of the table of
settings, and the `Policy` a config file's `[policies]` refine per tool. To add a session knob: one
`knob(...)` field here, and the code that reads it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .._clients import PROFILE_NAMES
from .._net import is_url
from .._paths import recovery_dir_in
from ._kinds import Boolean, Choice, Duration, Globs, Headers, PathValue, Seconds, Size, Text, Whole
from ._knobs import CLI, knob
from ._oauth_client import AUTH_METHODS, LOGIN_MODES, OAUTH_KEYS, OAuthClient, oauth_over
from ._policy import Policy, PolicySet

__all__ = ["COMPRESS_LEVELS", "Settings"]

COMPRESS_LEVELS = ("off", "low", "medium", "high", "max")  # --compress-tools (mcp-compressor's -c, and off)
TOOL_PREFIX = r"[A-Za-z0-9_-]{1,64}"  # --server-name: tool names allow these
MiB = 1024 * 1024
_WRAP = frozenset({"wrap", "config"})  # the streamable-http frontend's knobs: wrap's (and config's)
_URL = frozenset({"wrap", "serve", "config", "auth"})  # a URL backend's: also `auth login`'s


def _valid_tenant(value: str) -> None:
    from ..recovery import TENANT_RE

    if not TENANT_RE.match(value):
        raise ValueError("must be 1-64 letters, digits or _.@-")


def _valid_listen(value: str) -> None:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError("use HOST:PORT, e.g. 127.0.0.1:8766")


@dataclass
class Settings:
    target: list[str]  # backend command argv, or [URL]
    policy: Policy = field(default_factory=Policy)  # the session-wide per-tool knobs
    policies: PolicySet = field(default_factory=PolicySet)  # per-tool rules from the config file

    # -- the session's rows of the table of settings (in `mcpsqueeze config` order) -----------------
    recovery: Literal["memory", "files", "both"] = knob(
        "both",
        Choice(("memory", "files", "both")),
        "Where originals of shrunk results are kept.",
        library="memory",  # a library's host process owns its originals
    )
    recovery_dir: Path = knob(
        kind=PathValue(),
        help="Private directory for original files.",
        factory=lambda: Path(recovery_dir_in()),
    )
    retention: float | None = knob(
        24 * 3600.0,
        Duration(),
        "Delete original files older than this (at start, then hourly); 'off' disables.",
        default_text="24h",
        library=None,
    )
    cache_ttl: float | None = knob(
        300.0,
        Duration(),
        "Memory cache entry lifetime; 'off' keeps.",
        default_text="300s",
        library=None,  # a library object keeps its originals for its lifetime, bounded by entries and bytes
    )
    cache_entries: int = knob(32, Whole(1, 1 << 30), "Memory cache entries.", library=128)
    cache_bytes: int = knob(32 * MiB, Size(), "Memory cache size.", default_text="32M", library=64 * MiB)
    jobs: int = knob(4, Whole(1, 1024), "Worker threads for condensing.")
    page_size: int = knob(
        40_000,
        Whole(1000, 10**9),
        "Recover tool answers over N characters come as pages, each naming the call for the next (fits "
        "Claude Code's 50,000-character and 25,000-token limits).",
        doors=_WRAP,
    )
    client: str = knob(
        "auto",
        Choice(("auto", "none", *PROFILE_NAMES)),
        "Which client reads the results (docs/clients.md): 'auto' picks its profile from the clientInfo.name "
        "it sends; a profile's name picks that one; 'none' shapes results as for any client. A profile "
        "fits every answer to what that client keeps whole and shrinks the part its model sees.",
        doors=_WRAP | {"squeezer", "client"},
    )
    timeout: float | None = knob(
        None,
        Seconds(),
        "Seconds before a backend request is abandoned.",
        default_text="none",
        env="MCPSQUEEZE_BACKEND_TIMEOUT",  # MCPSQUEEZE_TIMEOUT is mcpsq's own wait for the session
        doors=CLI | {"client"},
    )
    stats_file: Path | None = knob(
        None, PathValue(), "Append one JSON line per call to this file.", doors=CLI
    )
    recovery_url: str | None = knob(  # redis://HOST:PORT/DB: originals shared by every replica
        None,
        Text(
            r"(?s)(rediss?|unix)://.*",
            "redis://HOST:PORT/DB",
            wanted='a Redis URL such as "redis://127.0.0.1:6379/0"',
        ),
        "Also keep originals in this Redis, shared by replicas (needs mcpsqueeze[redis]; see "
        "docs/scale-out.md).",
        doors=CLI,
    )
    tenant: str | None = knob(  # whose originals these are when the token names no tenant
        None,
        Text(wanted="1-64 letters, digits or _.@-", valid=_valid_tenant),
        "Whose originals these are when the bearer token names no tenant.",
        doors=CLI,
    )
    transport: Literal["stdio", "streamable-http"] = knob(
        "stdio",
        Choice(("stdio", "streamable-http")),
        "How the agent talks to the proxy.",
        doors=_WRAP,
        config=False,
    )
    host: str = knob(
        "127.0.0.1",
        Text(r"\S+", "ADDRESS", wanted="an address such as 127.0.0.1"),
        "Bind address for streamable-http.",
        doors=_WRAP,
        config=False,
    )
    port: int = knob(8765, Whole(0, 65535), "Port for streamable-http (0: any).", doors=_WRAP, config=False)
    token_file: Path | None = knob(  # the bearer token of wrap's HTTP frontend, or of serve's TCP API
        None,
        PathValue(),
        "wrap's streamable-http and serve's --listen: require `Authorization: Bearer <token>` from this "
        "0600 file (created if missing) [serve: default <socket dir>/token].",
        doors=_WRAP | {"serve"},
        config=False,
    )
    socket: Path | None = knob(
        None,
        PathValue(),
        "Unix socket of the session API for the shim [default: MCPSQUEEZE_SOCKET or <runtime "
        "dir>/session.sock].",
        env=None,  # MCPSQUEEZE_SOCKET is the shim's: where it finds the session (the default here too)
        doors=frozenset({"serve"}),
        config=False,
    )
    listen: str | None = knob(
        None,
        Text(metavar="127.0.0.1:PORT", valid=_valid_listen),
        "Serve the session API on loopback TCP instead (bearer token).",
        doors=frozenset({"serve"}),
        config=False,
    )
    servers_file: Path | None = knob(
        None,
        PathValue(),
        'Servers JSON: {"mcpServers": {name: {command, args, env, cwd} | {url, headers}}}.',
        flag="--servers",
        env=None,
        doors=frozenset({"serve"}),
        config=False,
    )
    max_sessions: int = knob(  # streamable-http frontend: sessions (each with its own backend) at once
        16,
        Whole(1, 1 << 20),
        "streamable-http: sessions at once per caller (bearer token; each runs its own backend). At the "
        "cap, the caller's session idle longest is ended to make room (its client gets 404 and starts a "
        "new one); a new session is refused with 503 only when all of the caller's sessions are busy. One "
        "tenant never ends another's session.",
        doors=_WRAP,
        config=False,
    )
    max_body: int = knob(  # HTTP doors: the largest request body (transports/_http_limits.py, docs/limits.md)
        16 * MiB,
        Size(),
        "streamable-http and serve: the largest HTTP request body; a larger one gets 413 and is never "
        "held (a connection must also send a complete request head within 10 s).",
        default_text="16M",
        doors=_WRAP | {"serve"},
        config=False,
    )
    server_name: str = knob(
        "backend",
        Text(),
        "Backend name in stats (serve: of the one backend given after '--').",
        flag="--name",
        short="-n",
        env="MCPSQUEEZE_NAME",
        doors=_WRAP | {"serve"},
        config=False,
    )
    headers: dict[str, str] = knob(
        kind=Headers(),
        help="HTTP header for a URL backend (repeatable).",
        factory=dict,
        flag="--header",
        short="-H",
        env="MCPSQUEEZE_HEADER",
        doors=_URL,
        config=False,
    )
    # A URL backend's OAuth client (`oauth`); a servers config takes the same as oauth_* keys per entry
    oauth_client_id: str | None = knob(
        None,
        Text(),
        "URL backend: a client pre-registered with its authorization server (no dynamic registration).",
        doors=_URL,
        config=False,
    )
    oauth_client_secret_file: Path | None = knob(
        None,
        PathValue(),
        "URL backend: the pre-registered client's secret, in a file only you can read.",
        doors=_URL,
        config=False,
    )
    oauth_client_metadata_url: str | None = knob(
        None,
        Text(metavar="HTTPS-URL"),
        "URL backend: identify as this client ID metadata document (CIMD) where the authorization "
        "server supports it, instead of registering dynamically.",
        doors=_URL,
        config=False,
    )
    oauth_login: str = knob(
        "never",
        Choice(LOGIN_MODES),
        "URL backend: when it wants a new OAuth authorization mid-session (none stored, expired beyond "
        "refresh, a wider scope): never = fail naming `mcpsqueeze auth login`; prompt = print the "
        "authorization URL on stderr and accept the browser's redirect on 127.0.0.1; fetch = GET it "
        "headlessly (test authorization servers that approve without a person).",
        doors=_URL,
        config=False,
    )
    oauth_auth_method: str | None = knob(
        None,
        Choice(AUTH_METHODS),
        "URL backend: how the pre-registered client sends its secret to the token endpoint, as it was "
        "registered: basic (client_secret_basic) or post (client_secret_post) [default: what the stored "
        "registration says, else basic].",
        doors=_URL,
        config=False,
    )
    compress_tools: Literal["off", "low", "medium", "high", "max"] = knob(
        "off",
        Choice(COMPRESS_LEVELS),
        "mcp-compressor's standard mode: tools/list shows NAME_get_tool_schema (listing every tool, less "
        "of each from low to max) and NAME_invoke_tool (max adds NAME_list_tools); calls go through the "
        "same shrinking and recovery. 'off': the backend's tools as they are.",
        doors=_WRAP | {"serve", "client"},
    )
    tool_prefix: str | None = knob(  # None: see `compressed_prefix`
        None,
        Text(
            TOOL_PREFIX,
            "NAME",
            wanted="1-64 letters, digits, '_' or '-' (the tools become NAME_invoke_tool ...)",
        ),
        "With --compress-tools: the tools' prefix (NAME_invoke_tool) [default: --name if given, else "
        "'server', as mcp-compressor].",
        flag="--server-name",
        env="MCPSQUEEZE_SERVER_NAME",
        doors=_WRAP,
    )
    include_tools: tuple[str, ...] = knob(
        (),
        Globs(),
        "Comma-separated globs (tool or server:tool) to expose.",
        doors=frozenset({"serve", "client"}),
        config=False,
    )
    exclude_tools: tuple[str, ...] = knob(
        (),
        Globs(),
        "Comma-separated globs (tool or server:tool) to hide.",
        doors=frozenset({"serve", "client"}),
        config=False,
    )
    quiet: bool = knob(  # no session summary on exit
        False,
        Boolean(),
        "No session summary on exit.",
        short="-q",
        switch=True,
        doors=CLI,
        config=False,
    )
    fastokens: bool = knob(
        False,
        Boolean(),
        "Count the tokens of huge results (16M characters and more) with fastokens, ~50x faster than "
        "tiktoken, at ~190 MB more memory while it is loaded (needs the fastokens package).",
        switch=True,
    )
    log_level: str = knob(
        "warning",
        Choice(("debug", "info", "warning", "error"), folded=True),
        "'info': one stderr line per shrunk or deduplicated call (tool, chars, tokens, response id).",
        doors=CLI,
        config=False,
    )

    @property
    def oauth(self) -> OAuthClient | None:
        """The URL backend's OAuth client the oauth_* rows describe (None: none given), checked when
        made (UsageError)."""
        given = {key: getattr(self, key) for key in OAUTH_KEYS}
        if self.oauth_login == "never":  # the default: no client of its own
            del given["oauth_login"]
        return oauth_over(None, given)

    @property
    def compressed_prefix(self) -> str:
        """The prefix of the compressed tools (`<prefix>_invoke_tool`): `--server-name`, else `--name` when
        it is not the default, else mcp-compressor's own default, "server"."""
        if self.tool_prefix:
            return self.tool_prefix
        return self.server_name if self.server_name not in ("", "backend") else "server"

    @property
    def is_url(self) -> bool:
        return is_url(self.target)

    def replaced(self, **values: Any) -> Settings:
        """A copy with these knobs (session or per-tool, by name) changed."""
        per_tool = {k: v for k, v in values.items() if k in _POLICY_FIELDS}
        session = {k: v for k, v in values.items() if k not in _POLICY_FIELDS}
        policy = dataclasses.replace(self.policy, **per_tool) if per_tool else self.policy
        return dataclasses.replace(self, policy=policy, **session)

    @classmethod
    def make(cls, target: list[str] | None = None, **values: Any) -> Settings:
        """Settings from flat knob values (`Settings.make(budget=4000, recovery="memory")`)."""
        return cls(target=[] if target is None else target).replaced(**values)


_POLICY_FIELDS = frozenset(f.name for f in dataclasses.fields(Policy))
