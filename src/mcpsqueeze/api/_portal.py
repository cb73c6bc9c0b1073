"""A background event loop for the library's sync faces (`Toolset.call_sync`, `with Client(...)`): one loop
for an object's whole life; it starts on first use and stops on `close()`.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

__all__ = ["Portal"]

T = TypeVar("T")


class Portal:
    """Run coroutines from sync code on one private event loop thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._entered: AbstractContextManager[Any] | None = None

    def _get(self) -> BlockingPortal:
        with self._lock:
            if self._portal is None:
                self._cm = start_blocking_portal()
                self._portal = self._cm.__enter__()
            return self._portal

    def call(self, func: Callable[..., Awaitable[T]], *args: Any) -> T:
        return self._get().call(func, *args)

    def enter(self, cm: Any) -> Any:
        """Enter an async context manager on the loop; `close()` exits it (in the same task)."""
        self._entered = self._get().wrap_async_context_manager(cm)
        return self._entered.__enter__()

    def close(self) -> None:
        with self._lock:
            cm, self._cm, self._portal = self._cm, None, None
        entered, self._entered = self._entered, None
        try:
            if entered is not None:
                entered.__exit__(None, None, None)
        finally:
            if cm is not None:
                cm.__exit__(None, None, None)
