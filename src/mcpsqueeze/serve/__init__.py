"""`mcpsqueeze serve`: the long-running session proxy that the bash shim talks to."""

from ._config import ServerSpec, ToolFilter, parse_config, parse_servers, spec_from_argv
from ._session import Listen, run_serve

__all__ = [
    "Listen",
    "ServerSpec",
    "ToolFilter",
    "parse_config",
    "parse_servers",
    "run_serve",
    "spec_from_argv",
]
