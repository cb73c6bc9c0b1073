"""The proxy: channels (transports), the relay, and the `wrap` runner."""

from ._channels import Channel, ChannelClosed, Invalid, Message
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
