"""The core: the `Session` every door holds, one path for every result (`Pipeline` and its stages), and
the recover answer every door gives. Its names load on first use (the shim's `mcpsq recover` imports
two stdlib-only modules of it)."""

from __future__ import annotations

from .._lazy import LazyFace

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing is not free at start-up
if TYPE_CHECKING:
    from ._compressed import CompressedToolError, CompressedTools, Invoke, large_invoke
    from ._full import FULL_META_KEY, listed_entry
    from ._pipeline import Outcome
    from ._recover import (
        DEFAULT_PAGE_SIZE,
        answer,
        list_recover_tool,
        parts_text,
        recover,
        recover_tool_definition,
    )
    from ._request import RecoverKeywords, RecoverRequest
    from ._services import SessionServices, build_services, sweep_forever
    from ._session import Session

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "FULL_META_KEY",
    "CompressedToolError",
    "CompressedTools",
    "Invoke",
    "Outcome",
    "RecoverKeywords",
    "RecoverRequest",
    "Session",
    "SessionServices",
    "answer",
    "build_services",
    "large_invoke",
    "list_recover_tool",
    "listed_entry",
    "parts_text",
    "recover",
    "recover_tool_definition",
    "sweep_forever",
]

_MODULES = {
    "Outcome": "_pipeline",
    "Session": "_session",
    "SessionServices": "_services",
    "build_services": "_services",
    "list_recover_tool": "_recover",
    "recover": "_recover",
    "DEFAULT_PAGE_SIZE": "_recover",
    "parts_text": "_recover",
    "answer": "_recover",
    "RecoverRequest": "_request",
    "RecoverKeywords": "_request",
    "recover_tool_definition": "_recover",
    "sweep_forever": "_services",
    "CompressedTools": "_compressed",
    "Invoke": "_compressed",
    "CompressedToolError": "_compressed",
    "listed_entry": "_full",
    "FULL_META_KEY": "_full",
    "large_invoke": "_compressed",
}


__getattr__ = LazyFace(__name__, _MODULES, globals())
