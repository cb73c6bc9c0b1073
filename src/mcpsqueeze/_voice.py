"""The voice port: how a door words recovery for the agent that reads it. The engine and the stages decide
what to say; the door's voice says how to get the original back in that door's words: a tool call for MCP
(`McpVoice`: wrap, the stateless path, the Python API), a shell command for `mcpsq` (`ShellVoice`: serve
behind the shim and Just-Bash). A new door adds an adapter here.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, replace
from typing import Protocol

__all__ = ["McpVoice", "ShellVoice", "Voice"]


class Voice(Protocol):
    """The door-specific words of recovery. Pure: text in, text out."""

    notices_inline: bool
    """True when a notice travels in the result's content; False when the door prints it elsewhere (the
    shim writes it on stderr, so stdout is only the data)."""
    allows_pointers: bool
    """True when a repeated result may be shown as a pointer to an earlier one. The shell door says no: a
    pointer piped into `jq` or `grep` reads as an empty answer."""

    def call(self, response_id: str, lines: str | None = None, window: tuple[int, int] | None = None) -> str:
        """The exact call that returns the whole original (or the given ``lines`` range of it, or the
        characters of ``window``: offset and length)."""
        ...

    def how_to_recover(self, response_id: str, file: str | None, pointer: str | None) -> str:
        """The sentence after a shrink report: the whole original, and how to read one part."""
        ...

    def file_recipe(self, file: str | None) -> str:
        """What to append to a one-line hint about the recovery file ("" when nothing)."""
        ...

    def one_part(self, pointer: str) -> str:
        """What to append to a one-line hint to say how to read one part of a JSON original."""
        ...

    def see_again(self, response_id: str) -> str:
        """The sentence under a dedup pointer: how to see the repeated content again."""
        ...

    def complete_original(self, response_id: str) -> str:
        """The sentence under a projection: how to get the unprojected original."""
        ...

    def named(self, tool: str) -> Voice:
        """This voice with the recover tool renamed (the backend may own ``squeeze_recover``)."""
        ...


# json.dumps(..., separators=(",", ":")), without building an encoder for every call written
_COMPACT = json.JSONEncoder(separators=(",", ":"))


@dataclass(frozen=True)
class McpVoice:
    """The MCP door: the agent calls the recover tool (``tool``) with JSON arguments."""

    tool: str = "squeeze_recover"

    notices_inline = True
    allows_pointers = True

    def call(self, response_id: str, lines: str | None = None, window: tuple[int, int] | None = None) -> str:
        arguments: dict[str, str | int] = {"response_id": response_id}
        if lines is not None:
            arguments["lines"] = lines
        if window is not None:
            arguments["offset"], arguments["length"] = window
        return f"{self.tool} " + _COMPACT.encode(arguments)

    def how_to_recover(self, response_id: str, file: str | None, pointer: str | None) -> str:
        text = f"Full original: {self.call(response_id)}; one part: add "
        if pointer is not None:
            text += f'"pointer":"{pointer}" (JSON pointer), "query" (JMESPath) or '
        text += '"offset"/"length" (text window).'
        return text if file is None else f"{text} File: {file}"

    def file_recipe(self, file: str | None) -> str:
        return ""  # the record names the file; the tool is the way back

    def one_part(self, pointer: str) -> str:
        return f'; one part: add "pointer":"{pointer}"'

    def see_again(self, response_id: str) -> str:
        return f'To see it again, call {self.tool} with {{"response_id": "{response_id}"}}.'

    def complete_original(self, response_id: str) -> str:
        return f'The complete original: call {self.tool} with {{"response_id": "{response_id}"}}.'

    def named(self, tool: str) -> McpVoice:
        return replace(self, tool=tool)


@dataclass(frozen=True)
class ShellVoice:
    """The shell door (the ``mcpsq`` shim, Just-Bash): commands, and the recovery file with the jq
    recipe that prints what ``mcpsq recover`` prints (the file is the whole MCP result envelope)."""

    notices_inline = False
    allows_pointers = False

    def call(self, response_id: str, lines: str | None = None, window: tuple[int, int] | None = None) -> str:
        command = f"mcpsq recover {response_id}"
        if lines is not None:
            command += f" --lines {lines}"
        if window is not None:
            command += f" --offset {window[0]} --length {window[1]}"
        return command

    def how_to_recover(self, response_id: str, file: str | None, pointer: str | None) -> str:
        text = f"Full original: {self.call(response_id)}{self.file_recipe(file)}"
        return text + (f"; one part: --pointer {pointer}." if pointer is not None else ".")

    def file_recipe(self, file: str | None) -> str:
        return "" if file is None else f" (or jq -rj '.content[0].text' {shlex.quote(file)})"

    def one_part(self, pointer: str) -> str:
        return f"; one part: --pointer {pointer}"

    def see_again(self, response_id: str) -> str:
        return f"To see it again, run: {self.call(response_id)}"

    def complete_original(self, response_id: str) -> str:
        return f"The complete original: {self.call(response_id)}"

    def named(self, tool: str) -> ShellVoice:
        return self
