"""The recovery store the pipeline uses: memory cache and/or file store behind one small facade."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from .._errors import RecoveryError, UsageError
from .._jsonbytes import loads
from ._files import FileStore
from ._lines import read_lines
from ._memory import MemoryCache
from ._pointer import read_window, resolve_pointer

__all__ = ["RecoveryStore", "Stored", "recover_result"]


@dataclass(frozen=True)
class Stored:
    response_id: str
    file: str | None


class RecoveryStore:
    """Stores each original before its preview is shown; an original stored nowhere is never previewed."""

    def __init__(self, memory: MemoryCache | None, files: FileStore | None) -> None:
        if memory is None and files is None:
            raise ValueError("a recovery store needs memory, files, or both")
        self.memory = memory
        self.files = files

    def planned_file(self, response_id: str) -> str | None:
        return str(self.files.path_for(response_id)) if self.files is not None else None

    def store(self, response_id: str, original: bytes) -> Stored:
        """Blocking (run it in a worker). Raises RecoveryError when the original was stored nowhere."""
        errors: list[str] = []
        in_memory = False
        if self.memory is not None:
            in_memory = self.memory.put(response_id, original)
            if not in_memory:
                errors.append(f"{len(original)} bytes exceed the memory cache limit")
        file: str | None = None
        if self.files is not None:
            try:
                file = str(self.files.write(response_id, original))
            except RecoveryError as exc:
                errors.append(str(exc))
                print(f"mcpsqueeze: could not store an original: {exc}", file=sys.stderr)
        if not in_memory and file is None:
            raise RecoveryError("; ".join(errors) or "no recovery store accepted the original")
        return Stored(response_id, file)

    def load(self, response_id: str) -> bytes:
        """Memory first, then the file; the clearest error when neither has it."""
        memory_error: RecoveryError | None = None
        if self.memory is not None:
            try:
                return self.memory.get(response_id)
            except RecoveryError as exc:
                memory_error = exc
        if self.files is not None:
            try:
                return self.files.read(response_id)
            except RecoveryError:
                if memory_error is None:
                    raise
        assert memory_error is not None
        raise memory_error


def _original_text(original: dict[str, Any]) -> str:
    from ..pipeline import text_of

    return text_of(original)


def recover_result(
    original_bytes: bytes,
    pointer: str | None = None,
    offset: int | None = None,
    length: int | None = None,
    lines: str | None = None,
) -> dict[str, Any]:
    """The CallToolResult that `squeeze_recover` returns: the original, one JSON node, a text window,
    or a range of lines (numbered as the preview's fold markers number them)."""
    if lines is not None and (offset is not None or length is not None):
        raise UsageError("give either lines or offset/length, not both")
    try:
        original = loads(original_bytes) if original_bytes else {}
    except (ValueError, RecursionError) as exc:
        raise RecoveryError(
            f"the stored original is not valid JSON ({exc}); it may have been altered"
        ) from exc
    if pointer is None and offset is None and length is None and lines is None:
        return {"content": original.get("content", []), "isError": False}
    text = _original_text(original)
    if pointer is not None:
        try:
            document = json.loads(text)
        except ValueError:
            if "structuredContent" not in original:
                raise RecoveryError(
                    "the original is not JSON, so a pointer cannot select a part of it; "
                    "use offset/length to read a window of its text instead"
                ) from None
            document = original["structuredContent"]
        node = resolve_pointer(document, pointer)
        text = node if isinstance(node, str) else json.dumps(node, ensure_ascii=False, indent=1)
    if lines is not None:
        chosen, first, last, total_lines = read_lines(text, lines)
        return {
            "content": [{"type": "text", "text": chosen}],
            "isError": False,
            "_meta": {"mcpsqueeze/lines": {"first": first, "last": last, "total_lines": total_lines}},
        }
    window, total = read_window(text, offset or 0, length)
    start = offset or 0
    # The window is the exact text (so windows concatenate back to the original); its place is in _meta.
    return {
        "content": [{"type": "text", "text": window}],
        "isError": False,
        "_meta": {"mcpsqueeze/window": {"offset": start, "length": len(window), "total_chars": total}},
    }
