"""The proxy: channels (transports), the relay, and the `wrap` runner.

Its modules load on first use: `wrap` imports the channels before the relay, the stages and the stores,
while `_handshake` relays the first `initialize` (importing the package must not import them all).
"""

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see __getattr__
if TYPE_CHECKING:
    from ._channels import Channel, ChannelClosed
    from ._jsonrpc import Invalid, Message
    from ._relay import Relay, recover_tool_definition
    from ._wrap import open_backend, run_wrap

__all__ = [
    "Channel",
    "ChannelClosed",
    "Invalid",
    "Message",
    "Relay",
    "open_backend",
    "recover_tool_definition",
    "run_wrap",
]

_MODULES = {
    "Channel": "_channels",
    "ChannelClosed": "_channels",
    "Invalid": "_jsonrpc",
    "Message": "_jsonrpc",
    "Relay": "_relay",
    "recover_tool_definition": "_relay",
    "open_backend": "_wrap",
    "run_wrap": "_wrap",
}


def __getattr__(name: str) -> object:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_MODULES[name]}", __name__), name)
