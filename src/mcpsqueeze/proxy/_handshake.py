"""Relay the agent's first `initialize` before the relay itself has been imported.

With a backend that starts at once, the agent's wait for the first answer is our own start-up: importing
asyncio, anyio, the relay, the stages and the stores takes ~100 ms of one core. So once the backend runs
(`_prestart`), `handshake` passes the first exchange with blocking reads while a thread imports the rest:
the agent's `initialize` goes to the backend with id 1 (the relay's first id, the same bytes the relay
would send) and the backend's answer goes back with the agent's id (its line unchanged but for the id, as
the relay writes it). It stops at anything else (another first message, a backend message before the
answer, an end of file) and as soon as the imports are done, whichever comes first, leaving what it read
unhandled to the relay: it never waits longer than the relay would take to be ready. The relay carries
on from the `Handshake` (`take`), so an exchange cut anywhere behaves as if the relay had done it all.

With a `Catalog` (wrap's settings leave tools/list to the relay's plain answer: no compressed listing, no
output schema hidden by a policy), it goes on the same way through the agent's `notifications/initialized`
and first `tools/list`, which it answers as the relay would (the recover tool appended under the first
free name): an agent's second wait at start-up is then also the backend's own, not our imports.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .._jsonbytes import dumps
from ..transports import Invalid, line_of, parse_line, with_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..settings import Settings

__all__ = [
    "BACKEND_ID",
    "LISTING_ID",
    "Catalog",
    "Handshake",
    "early_listing",
    "handshake",
    "recover_tool_name",
    "take",
]

BACKEND_ID = 1  # the id the relay gives the backend's first request
LISTING_ID = 2  # ... and its second: the first tools/list, when the handshake sends it
_CHUNK = 1 << 16
_SWITCH_INTERVAL = 0.001  # seconds: the importing thread yields the GIL soon after an answer arrives


@dataclass
class Handshake:
    """What passed before the relay ran, for it to carry on from."""

    front: bytes = b""  # read from the agent but not handled: the relay reads it first
    front_eof: bool = False  # ... and then the agent's end of file
    back: bytes = b""  # read from the backend but not handled
    request: dict[str, Any] | None = None  # the agent's initialize, sent to the backend as BACKEND_ID
    sent: float = 0.0  # when (time.perf_counter), for the relay's --timeout
    answered: bool = False  # the backend's answer to it was written to the agent
    protocol: str | None = None  # the protocolVersion that answer gave
    listing: dict[str, Any] | None = None  # the agent's first tools/list, sent to the backend as LISTING_ID
    listing_sent: float = 0.0
    listed: bool = False  # its answer (with the recover tool) was written to the agent
    recover_tool: str | None = None  # the name that answer gave the recover tool


@dataclass(frozen=True)
class Catalog:
    """How the relay answers a plain tools/list (the recover tool's name before the backend's tools are
    known; None: not offered): the handshake answers the first one the same way, shaped for the client
    its `initialize` names (core/_clients.py `listed_for`: the `client` setting, the recover pages' size,
    and whether a tool's results may change at all)."""

    recover_tool: str | None
    client: str = "none"
    page_size: int = 40_000
    may_change: Callable[[str], bool] = lambda name: True


def recover_tool_name(settings: Settings) -> str | None:
    """The recover tool is offered when some stage can change a result: by default or by a policy."""
    keys = ("shrink", "dedup", "toonify")
    on = any(getattr(settings.policy, k) or settings.policies.may_enable(k) for k in keys)
    return "squeeze_recover" if on else None


def early_listing(settings: Settings) -> Catalog | None:
    """A `Catalog` when the relay's tools/list answer is the backend's plus the recover tool; None when
    it is more (`--compress-tools`, or output schemas a drop-duplicate-structured policy hides)."""
    if settings.compress_tools != "off":
        return None
    key = "drop_duplicate_structured"
    if settings.policy.drop_duplicate_structured or settings.policies.may_enable(key):
        return None
    from ..core._clients import may_change_structured

    policy_for = settings.policies.resolver(settings.policy)

    def may_change(name: str) -> bool:
        return may_change_structured(policy_for(settings.server_name, name))

    return Catalog(recover_tool_name(settings), settings.client, settings.page_size, may_change)


_done: list[Handshake] = []


def take() -> Handshake | None:
    """What `handshake` did, once; None when it did not run."""
    return _done.pop() if _done else None


def handshake(
    backend: subprocess.Popen[bytes], preload: Sequence[str], listing: Catalog | None = None
) -> None:
    """Import the modules `preload` names in a thread and meanwhile relay the first exchange between our
    stdin/stdout and `backend` (with `listing`, the first tools/list too); returns once they are
    imported, the relay's start-up being done."""
    ready_r, ready_w = os.pipe()
    if listing is not None:  # what answering the listing needs first: not waited for behind the rest
        preload = ["mcpsqueeze.core._recover", *preload]
    importer = threading.Thread(target=_import, args=(preload, ready_w), daemon=True)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(_SWITCH_INTERVAL)
    importer.start()
    try:
        assert backend.stdin is not None and backend.stdout is not None
        exchange = _Exchange(backend.stdin.fileno(), backend.stdout.fileno(), ready_r, listing)
        _done.append(exchange.run())
    finally:
        importer.join()
        sys.setswitchinterval(interval)
        os.close(ready_r)


def _import(names: Sequence[str], done_fd: int) -> None:
    try:
        for name in names:
            with contextlib.suppress(Exception):  # the relay's own import reports any failure
                importlib.import_module(name)
    finally:
        os.close(done_fd)  # the reader sees end of file: the imports are done


def _initialize(line: bytes) -> dict[str, Any] | None:
    """The agent's line as a plain `initialize` request the relay would forward unchanged, else None
    (anything less plain, such as progress tokens or envelopes, is the relay's)."""
    message = parse_line(line)
    if not _plain(message, "initialize", request=True):
        return None
    assert not isinstance(message, Invalid)
    return message if isinstance(message.get("params"), dict) else None


def _plain(message: Any, method: str, *, request: bool) -> bool:
    """`message` (parsed) is a plain `method` the relay would forward as it is: a request with a string
    or integer id (`request`) or a notification, with no params or params without `_meta`."""
    if isinstance(message, Invalid) or message.get("method") != method:
        return False
    if request != ("id" in message) or (request and type(message["id"]) not in (int, str)):
        return False
    params = message.get("params")
    return "params" not in message or (isinstance(params, dict) and "_meta" not in params)


class _Exchange:
    def __init__(self, back_in: int, back_out: int, imported: int, listing: Catalog | None = None) -> None:
        self.back_in = back_in
        self.back_out = back_out
        self.imported = imported
        self.listing = listing
        self.state = Handshake()

    def run(self) -> Handshake:
        state = self.state
        line, rest, eof = self._line(0, self.back_out)  # the agent speaks first; a backend that does: relay
        state.front, state.front_eof = rest, eof
        if line is None:
            return state
        request = _initialize(line)
        if request is None:
            state.front = line + b"\n" + rest
            return state
        state.request, state.sent = request, time.perf_counter()
        message = self._ask(request, BACKEND_ID)
        if message is None:
            return state
        state.answered = True  # also when the agent has gone: the relay forgets a request before writing
        with contextlib.suppress(OSError):  # its answer too, and notices the end when it reads stdin
            _write(1, line_of(with_id(message, request["id"])))
        version = message["result"].get("protocolVersion")
        state.protocol = version if isinstance(version, str) else None
        if self.listing is not None and not state.front_eof:
            self._list(self.listing)
        return state

    def _list(self, listing: Catalog) -> None:
        """The agent's `notifications/initialized` (passed on) and first `tools/list`, answered as the
        relay answers it; anything else, or anything first from the backend, is left to the relay."""
        from ..core import list_recover_tool  # (light: no pipeline, no anyio; while the agent reads)

        state = self.state
        line, state.front, state.front_eof = self._line(0, self.back_out, buffered=state.front)
        if line is None:
            return
        message = parse_line(line)
        if _plain(message, "notifications/initialized", request=False):
            assert not isinstance(message, Invalid)
            with contextlib.suppress(OSError):
                _write(self.back_in, dumps(message) + b"\n")
            line, state.front, state.front_eof = self._line(0, self.back_out, buffered=state.front)
            if line is None:
                return
            message = parse_line(line)
        if not _plain(message, "tools/list", request=True):
            state.front = line + b"\n" + state.front
            return
        assert not isinstance(message, Invalid)
        state.listing, state.listing_sent = message, time.perf_counter()
        reply = self._ask(message, LISTING_ID)
        if reply is None:
            return
        result = reply["result"]
        state.recover_tool, listed = list_recover_tool(result, listing.recover_tool, ())
        listed = self._shaped(listed, listing, state)
        reply = with_id(reply, message["id"])
        state.listed = True
        with contextlib.suppress(OSError):
            _write(1, line_of(reply if listed is result else {**reply, "result": listed}))

    @staticmethod
    def _shaped(result: dict[str, Any], listing: Catalog, state: Handshake) -> dict[str, Any]:
        """The listing as the client its `initialize` names should see it, as the relay shapes it."""
        from ..core._clients import choose, client_info_of, listed_for

        assert state.request is not None
        profile = choose(listing.client, client_info_of(state.request.get("params"))).profile
        tools = result.get("tools")
        if profile is None or not isinstance(tools, list):
            return result
        shaped = listed_for(profile, tools, [state.recover_tool or ""], listing.page_size, listing.may_change)
        return {**result, "tools": shaped}

    def _ask(self, request: dict[str, Any], request_id: int) -> dict[str, Any] | None:
        """`request` sent to the backend as `request_id` and its answer, a result; None (what was read
        left for the relay) when the backend ends first or says anything else first."""
        state = self.state
        with contextlib.suppress(OSError):  # a backend gone already: the relay reports its end of file
            _write(self.back_in, dumps({**request, "id": request_id}) + b"\n")
        answer, state.back, _ = self._line(self.back_out)
        if answer is None:
            return None
        reply = parse_line(answer)
        if (
            isinstance(reply, Invalid)
            or "method" in reply
            or type(reply.get("id")) is not int
            or reply["id"] != request_id
            or not isinstance(reply.get("result"), dict)
        ):
            state.back = answer + b"\n" + state.back
            return None
        return reply

    def _line(self, fd: int, *others: int, buffered: bytes = b"") -> tuple[bytes | None, bytes, bool]:
        """(the first line read from `fd` after what was `buffered` from it, what came after it, end of
        file) — the line None when another fd became readable, `fd` ended or the imports are done first."""
        data = bytearray(buffered)
        line, newline, rest = data.partition(b"\n")
        if newline:
            return bytes(line), bytes(rest), False
        while True:
            try:
                ready, _, _ = select.select([fd, *others, self.imported], [], [])
            except (OSError, ValueError):
                return None, bytes(data), False
            if fd not in ready:
                return None, bytes(data), False
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                return None, bytes(data), False
            if not chunk:
                return None, bytes(data), True
            data += chunk
            line, newline, rest = data.partition(b"\n")
            if newline:
                return bytes(line), bytes(rest), False


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])
