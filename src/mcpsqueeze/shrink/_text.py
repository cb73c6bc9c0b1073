"""Plain text: keep a head and a tail, cut at line boundaries where possible, mark the gap."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["head_tail"]

_HEAD_SHARE = 2 / 3
_LINE_SNAP = 0.25  # give up at most this share of a side to end it on a line boundary


def head_tail(text: str, target: int, marker: Callable[[int], str]) -> str | None:
    """``text`` cut to at most ``target`` characters around ``marker(omitted)``, or None if no
    head and tail fit next to the marker. ``omitted`` is the exact number of characters cut."""
    if len(text) <= target:
        return text
    widest = marker(len(text))
    room = target - len(widest) - 2  # two newlines around the marker
    if room < 2:
        return None
    head_room = int(room * _HEAD_SHARE)  # (1 or more, and so is the tail's room: ``room`` is 2 or more)
    tail_room = room - head_room
    head_end = head_room
    newline = text.rfind("\n", 0, head_room)
    if newline >= 0 and head_room - (newline + 1) <= head_room * _LINE_SNAP:
        head_end = newline + 1
    tail_start = len(text) - tail_room
    newline = text.find("\n", tail_start - 1)
    if newline >= 0 and newline + 1 - tail_start <= tail_room * _LINE_SNAP:
        tail_start = newline + 1
    head, tail = text[:head_end], text[tail_start:]
    middle = marker(len(text) - len(head) - len(tail))
    before = "" if not head or head.endswith("\n") else "\n"
    after = "\n" if tail and not tail.startswith("\n") else ""
    return head + before + middle + after + tail
