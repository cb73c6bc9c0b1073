"""Who mcpsqueeze is to a URL backend's OAuth authorization server: a setting, checked when made. The OAuth
client itself (tokens, refresh, the browser step) is `transports/_oauth.py`.
"""

from __future__ import annotations

import dataclasses
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .._errors import UsageError
from .._trusted import read_trusted

__all__ = ["AUTH_METHODS", "LOGIN_MODES", "OAUTH_KEYS", "OAuthClient", "oauth_over"]

LoginMode = Literal["never", "prompt", "fetch"]
LOGIN_MODES: tuple[LoginMode, ...] = ("never", "prompt", "fetch")
AuthMethod = Literal["basic", "post"]
AUTH_METHODS: tuple[AuthMethod, ...] = ("basic", "post")


@dataclass(frozen=True)
class OAuthClient:
    """Who mcpsqueeze is to a backend's authorization server, and whether a running proxy may log in: each
    field is the `oauth_*` setting of its name (the settings table says what each means)."""

    client_id: str | None = None
    client_secret_file: Path | None = None
    client_metadata_url: str | None = None
    login: LoginMode = "never"
    timeout: float = 300.0  # seconds to wait for the browser's redirect
    auth_method: AuthMethod | None = None

    def __post_init__(self) -> None:
        if self.client_secret_file is not None and not self.client_id:
            raise UsageError("an OAuth client secret file needs the client id too (--oauth-client-id)")
        if self.client_metadata_url is not None:
            parts = urllib.parse.urlsplit(self.client_metadata_url)
            if parts.scheme != "https" or not parts.netloc or parts.path in ("", "/"):
                raise UsageError(
                    f"the OAuth client metadata URL must be an https:// URL with a path (the document's "
                    f"address, used as the client_id), got {self.client_metadata_url!r}"
                )
        if self.auth_method is not None and self.auth_method not in AUTH_METHODS:
            raise UsageError(f"OAuth auth method must be basic or post, got {self.auth_method!r}")
        if self.auth_method is not None and not self.client_id:
            raise UsageError("an OAuth auth method is for a pre-registered client (--oauth-client-id)")
        if self.login not in LOGIN_MODES:
            raise UsageError(f"OAuth login must be one of {', '.join(LOGIN_MODES)}, got {self.login!r}")

    def client_secret(self) -> str | None:
        """The secret, read from its file now (never kept in argv, the environment or a config file)."""
        path = self.client_secret_file
        if path is None:
            return None
        try:
            data = read_trusted(path, "OAuth client secret file", private=True, follow=False)
        except FileNotFoundError:
            raise UsageError(f"cannot read the OAuth client secret file {path}: it does not exist") from None
        secret = data[:65536].decode("utf-8", "replace").strip()
        if not secret:
            raise UsageError(f"OAuth client secret file {path} is empty")
        return secret


# The settings (and a servers config's URL entry keys) that describe the client: oauth_<field>; the wait for
# the browser is `auth login`'s own --timeout
OAUTH_KEYS = tuple(f"oauth_{f.name}" for f in dataclasses.fields(OAuthClient) if f.name != "timeout")


def oauth_over(base: OAuthClient | None, keys: Mapping[str, Any]) -> OAuthClient | None:
    """`base` (None: the defaults) with the `OAUTH_KEYS` given in `keys` (None: not given) over it; None
    when neither gives one. A bad combination is a UsageError."""
    fields = {k.removeprefix("oauth_"): v for k, v in keys.items() if k in OAUTH_KEYS and v is not None}
    if not fields:
        return base
    return dataclasses.replace(base, **fields) if base is not None else OAuthClient(**fields)
