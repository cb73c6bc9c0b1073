"""Settings: every knob of a session, the per-tool policies, the TOML config file and the servers
config. Pure data and parsing; the only file reads are the config files themselves.
"""

from __future__ import annotations

from ._file import (
    DEFAULT_KEYS,
    Config,
    ConfigError,
    default_config_path,
    find_config,
    load_config,
    read_servers_file,
)
from ._kinds import Duration, Kind, Seconds, Size
from ._knobs import Knob
from ._oauth_client import OAuthClient, oauth_over
from ._policy import Policy, PolicySet
from ._servers import ServerSpec, ToolFilter, parse_config, parse_servers, spec_from_argv
from ._settings import COMPRESS_LEVELS, Settings
from ._table import KNOBS, check_keywords, knob_named, library_defaults

__all__ = [
    "COMPRESS_LEVELS",
    "DEFAULT_KEYS",
    "KNOBS",
    "Config",
    "ConfigError",
    "Duration",
    "Kind",
    "Knob",
    "OAuthClient",
    "Policy",
    "PolicySet",
    "Seconds",
    "ServerSpec",
    "Settings",
    "Size",
    "ToolFilter",
    "check_keywords",
    "default_config_path",
    "find_config",
    "knob_named",
    "library_defaults",
    "load_config",
    "oauth_over",
    "parse_config",
    "parse_servers",
    "read_servers_file",
    "spec_from_argv",
]
