"""Settings: every knob of a session, the per-tool policies, the TOML config file and the servers
config. Pure data and parsing; the only file reads are the config files themselves.
"""

from __future__ import annotations

from .._lazy import LazyFace

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing is not free at start-up
if TYPE_CHECKING:
    from ._file import (
        DEFAULT_KEYS,
        Config,
        ConfigError,
        default_config_path,
        find_config,
        load_config,
        read_servers_file,
    )
    from ._kinds import Duration, Kind, Seconds
    from ._knobs import Knob
    from ._oauth_client import AUTH_METHODS, LOGIN_MODES, AuthMethod, LoginMode, OAuthClient
    from ._policy import (
        DEFAULT_BUDGET,
        DEFAULT_SHRINK_ABOVE,
        MIN_BUDGET,
        MIN_TRUNCATE_CHARS,
        Policy,
        PolicySet,
    )
    from ._servers import ServerSpec, ToolFilter, parse_config, parse_servers, spec_from_argv
    from ._settings import COMPRESS_LEVELS, Settings, default_recovery_dir
    from ._table import KNOBS, check_keywords, knob_named, library_defaults

__all__ = [
    "AUTH_METHODS",
    "COMPRESS_LEVELS",
    "DEFAULT_BUDGET",
    "DEFAULT_KEYS",
    "DEFAULT_SHRINK_ABOVE",
    "KNOBS",
    "LOGIN_MODES",
    "MIN_BUDGET",
    "MIN_TRUNCATE_CHARS",
    "AuthMethod",
    "Config",
    "ConfigError",
    "Duration",
    "Kind",
    "Knob",
    "LoginMode",
    "OAuthClient",
    "Policy",
    "PolicySet",
    "Seconds",
    "ServerSpec",
    "Settings",
    "ToolFilter",
    "check_keywords",
    "default_config_path",
    "default_recovery_dir",
    "find_config",
    "knob_named",
    "library_defaults",
    "load_config",
    "parse_config",
    "parse_servers",
    "read_servers_file",
    "spec_from_argv",
]

_MODULES = {
    "AUTH_METHODS": "_oauth_client",
    "AuthMethod": "_oauth_client",
    "COMPRESS_LEVELS": "_settings",
    "Config": "_file",
    "ConfigError": "_file",
    "DEFAULT_BUDGET": "_policy",
    "DEFAULT_KEYS": "_file",
    "DEFAULT_SHRINK_ABOVE": "_policy",
    "LOGIN_MODES": "_oauth_client",
    "LoginMode": "_oauth_client",
    "MIN_BUDGET": "_policy",
    "MIN_TRUNCATE_CHARS": "_policy",
    "OAuthClient": "_oauth_client",
    "Policy": "_policy",
    "PolicySet": "_policy",
    "ServerSpec": "_servers",
    "Settings": "_settings",
    "ToolFilter": "_servers",
    "default_config_path": "_file",
    "default_recovery_dir": "_settings",
    "find_config": "_file",
    "load_config": "_file",
    "parse_config": "_servers",
    "parse_servers": "_servers",
    "read_servers_file": "_file",
    "spec_from_argv": "_servers",
    "Duration": "_kinds",
    "Kind": "_kinds",
    "Seconds": "_kinds",
    "Knob": "_knobs",
    "KNOBS": "_table",
    "check_keywords": "_table",
    "knob_named": "_table",
    "library_defaults": "_table",
}


__getattr__ = LazyFace(__name__, _MODULES, globals())
