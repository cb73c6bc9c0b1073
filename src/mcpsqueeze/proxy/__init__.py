"""The proxy: channels (transports), the relay, and the `wrap` runner."""

from ._channels import Channel, ChannelClosed, Invalid, Message
from ._relay import Relay, SessionServices, recover_tool_definition
from ._wrap import build_services, new_pipeline, open_backend, run_wrap

__all__ = [
    "Channel",
    "ChannelClosed",
    "Invalid",
    "Message",
    "Relay",
    "SessionServices",
    "build_services",
    "new_pipeline",
    "open_backend",
    "recover_tool_definition",
    "run_wrap",
]
