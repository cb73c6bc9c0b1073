"""The MCP door (`mcpsqueeze wrap`): the relay, the HTTP frontends, and the `wrap` runner.

Its modules load on first use: `wrap` imports the channels before the relay, the stages and the stores,
while `_handshake` relays the first `initialize` (importing the package must not import them all).
"""

from .._lazy import LazyFace

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing the face must stay cheap
if TYPE_CHECKING:
    from ._handshake import early_listing, handshake
    from ._relay import Relay
    from ._wrap import run_wrap

__all__ = [
    "Relay",
    "early_listing",
    "handshake",
    "run_wrap",
]

_MODULES = {
    "Relay": "_relay",
    "early_listing": "_handshake",
    "handshake": "_handshake",
    "run_wrap": "_wrap",
}


__getattr__ = LazyFace(__name__, _MODULES, globals())
