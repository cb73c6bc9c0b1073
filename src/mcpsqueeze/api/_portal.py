"""A background event loop for the library's sync faces (`Toolset.call_sync`, `with Client(...)`): one loop
for an object's whole life; it starts on first use and stops on `close()`.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from typing import Any, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

__all__ = ["Portal"]

T = TypeVar("T")


class Portal:
    """Run coroutines from sync code on one private event loop thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stack = ExitStack()  # the loop, then what was entered on it: `close()` exits them in reverse
        self._portal: BlockingPortal | None = None

    def _get(self) -> BlockingPortal:
        with self._lock:
            if self._portal is None:
                self._portal = self._stack.enter_context(start_blocking_portal())
            return self._portal

    def call(self, func: Callable[..., Awaitable[T]], *args: Any) -> T:
        return self._get().call(func, *args)

    def enter(self, cm: Any) -> Any:
        """Enter an async context manager on the loop; `close()` exits it (in the same task)."""
        return self._stack.enter_context(self._get().wrap_async_context_manager(cm))

    def close(self) -> None:
        with self._lock:
            stack, self._stack, self._portal = self._stack, ExitStack(), None
        stack.close()
