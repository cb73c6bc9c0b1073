"""mcpsqueeze: a transparent MCP proxy that shrinks, deduplicates and counts tool results.

The public Python API; the CLI (`mcpsqueeze`) is the main way in.
"""

from ._errors import BackendError, MCPSqueezeError, RecoveryError, RefusedPathError, ShrinkError, UsageError
from ._lazy import LazyFace
from ._version import __version__

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the shim imports this package and must start fast
if TYPE_CHECKING:
    from .api import Client, Squeezer, ToolError, Toolset, shrink_tools
    from .settings import Settings

__all__ = [
    "BackendError",
    "Client",
    "MCPSqueezeError",
    "RecoveryError",
    "RefusedPathError",
    "Settings",
    "ShrinkError",
    "Squeezer",
    "ToolError",
    "Toolset",
    "UsageError",
    "__version__",
    "shrink_tools",
]

# Lazy: the bash shim imports this package on every command and must not pay for platformdirs; the library
# doors import anyio, pydantic and the SDK: only when asked for.
__getattr__ = LazyFace(
    __name__,
    {
        "Settings": "settings",
        **dict.fromkeys(["Client", "Squeezer", "ToolError", "Toolset", "shrink_tools"], "api"),
    },
    globals(),
)
