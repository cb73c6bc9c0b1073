"""The MCP door (`mcpsqueeze wrap`): the relay, the HTTP frontends, and the `wrap` runner."""

from ._relay import Relay
from ._wrap import run_wrap

__all__ = ["Relay", "run_wrap"]
