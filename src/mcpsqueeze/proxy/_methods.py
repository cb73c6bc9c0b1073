"""What the MCP door changes, per method, whichever wire carries the request (wrap's relay over stdio
or a 2025-11-25 HTTP session, or one 2026-07-28 POST). Everything else is forwarded as it came.

- `initialize`: the session's client profile chosen from its `clientInfo`; then forwarded.
- `tools/list`: the backend's listing plus the recover tool (under a free name), shaped for the client;
  with `--compress-tools`, the compressed listing.
- `tools/call` of the recover tool: answered from the store, never forwarded.
- `tools/call` of a compressed frontend tool: its answer, or the real call it names (then as below).
- `tools/call` with `full`: the stored original, or the error for a tool with side effects; else run,
  its result shown unshrunk.
- `tools/call`: forwarded; its result presented by the session (dedup, shrink, ...).

An answer to a 2026-07-28 request is stamped as that revision requires (`_envelope.stamped`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .._clients import ClientProfile, listed_for, may_change_structured
from .._envelope import is_modern, meta_of, stamped
from .._errors import BackendError
from .._results import text_of
from ..core import DEFAULT_PAGE_SIZE, FULL_META_KEY, CompressedTools, Invoke, Session, list_recover_tool
from ..transports import Message, list_tools, params_of
from ._compressed_front import Ask, CompressedFront, invoke_message

__all__ = ["Forward", "Methods"]

logger = logging.getLogger("mcpsqueeze.proxy")

#: A request sent on to the backend (the requester's id on it); its answer with that id, or None when
#: it was cancelled (nothing is answered then).
Forward = Callable[[Message], Awaitable[Message | None]]


def _reply(request: Message, result: Any) -> Message:
    return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}


class Methods:
    """The table above, for one door: its recover tool's name (renamed in `root` and its callers'
    sessions when the backend owns the name) and its compressed listing."""

    def __init__(self, root: Session, compressed: CompressedFront | None = None) -> None:
        self.root = root
        # the recover tool is offered when some stage can change a result: by default or by a policy
        policy, policies = root.settings.policy, root.settings.policies
        on = any(getattr(policy, k) or policies.may_enable(k) for k in ("shrink", "dedup", "toonify"))
        self.recover_tool: str | None = "squeeze_recover" if on else None
        self.compressed = compressed

    def name_recover_tool(self, name: str | None) -> None:
        if name != self.recover_tool:
            self.recover_tool = name
            if name is not None:
                self.root.name_recover_tool(name)

    def ours(self, message: Message) -> bool:
        """Whether the door answers this tools/call itself (the recover tool, a compressed frontend tool)."""
        name = params_of(message).get("name")
        compressed = self.compressed is not None and self.compressed.owns(name)
        return compressed or (self.recover_tool is not None and name == self.recover_tool)

    def forwarded(self, message: Message) -> bool:
        """Whether `answer` sends this request on as it came (the relay then sends it at once, in order)."""
        method = message["method"]
        if method == "tools/list":
            return self.compressed is None
        return method != "tools/call" or not (
            self.ours(message) or meta_of(message.get("params")).get(FULL_META_KEY) is True
        )

    async def answer(
        self, message: Message, session: Session, client: ClientProfile | None, ask: Ask, forward: Forward
    ) -> Message | None:
        """The answer to one request of the agent (None: cancelled, nothing to answer)."""
        method = message["method"]
        if method == "initialize":
            session.client = session.choose_client(message.get("params"))
            return await forward(message)
        if method == "tools/list":
            answer = await self._list(message, session, client, ask, forward)
        elif method == "tools/call":
            answer = await self._call(message, session, client, ask, forward)
        else:
            return await forward(message)
        result = answer.get("result") if answer is not None else None
        if answer is None or not isinstance(result, dict) or not is_modern(message.get("params")):
            return answer
        return {**answer, "result": stamped(method, result)}

    async def _list(
        self, message: Message, session: Session, client: ClientProfile | None, ask: Ask, forward: Forward
    ) -> Message | None:
        if self.compressed is not None:
            tools = await self.compressed.fetch(ask)
            if not isinstance(tools, CompressedTools):
                return {**tools, "id": message.get("id")}  # the backend's own error
            name, result = self.compressed.listing(tools, self.recover_tool)
            self.name_recover_tool(name)
            return self._shaped(_reply(message, result), session, client)
        answer = await forward(message)
        result = answer.get("result") if answer is not None else None
        if answer is None or not isinstance(result, dict):
            return answer
        name, listed = list_recover_tool(result, self.recover_tool)
        self.name_recover_tool(name)
        return self._shaped(answer if listed is result else {**answer, "result": listed}, session, client)

    def _shaped(self, answer: Message, session: Session, client: ClientProfile | None) -> Message:
        """A tools/list answer as the client should see it: no outputSchema for a tool whose policy drops a
        duplicate structuredContent (a client checking results against it would reject one without it), and
        for a client profile, ``listed_for``."""
        result = answer.get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        policy_for = session.pipeline.policy_for
        if policy_for is None or not isinstance(tools, list):
            return answer
        server = session.services.server_name

        def policy(name: Any) -> Any:
            return policy_for(server, str(name))

        shaped = [
            {k: v for k, v in t.items() if k != "outputSchema"}
            if isinstance(t, dict) and "outputSchema" in t and policy(t.get("name")).drop_duplicate_structured
            else t
            for t in tools
        ]
        ours = [self.recover_tool or ""]
        if self.compressed is not None:
            ours.append(CompressedTools.of(self.compressed.prefix, self.compressed.level, ()).invoke_tool)
        page_size = session.services.page_size or DEFAULT_PAGE_SIZE
        shaped = listed_for(client, shaped, ours, page_size, lambda name: may_change_structured(policy(name)))
        if all(a is b for a, b in zip(shaped, tools, strict=True)):
            return answer
        assert isinstance(result, dict)
        return {**answer, "result": {**result, "tools": shaped}}

    async def _call(
        self, message: Message, session: Session, client: ClientProfile | None, ask: Ask, forward: Forward
    ) -> Message | None:
        # Every answer to this call (the frontend's, the recover tool's, the tool's) fits the model it names.
        client = client.for_call(meta_of(params_of(message))) if client is not None else None
        if self.compressed is not None and self.compressed.owns(params_of(message).get("name")):
            resolved = await self.compressed.resolve(ask, message, (self.recover_tool,))
            if not isinstance(resolved, Invoke):
                return await self._frontend_answer(message, resolved, session, client)
            message = invoke_message(message, resolved)  # the real call, which goes on as any other
        params = params_of(message)
        if self.recover_tool is not None and params.get("name") == self.recover_tool:
            page_size = session.services.page_size
            arguments = params.get("arguments") or {}
            result = await session.services.workers.run(
                session.recover_tool_answer, arguments, page_size, client
            )
            return _reply(message, result)
        meta = meta_of(params)
        tool, arguments = str(params.get("name")), params.get("arguments")
        full = meta.get(FULL_META_KEY) is True
        if full:

            async def entry() -> dict[str, Any] | None:  # its tools/list entry, listed only when asked
                try:
                    listed = await list_tools(ask)
                except BackendError:
                    return None
                return next((t for t in listed if t["name"] == tool), None)

            shown = await session.full_outcome(None, tool, arguments, entry=entry, client=client)
            if shown is not None:  # the stored original, or the error for a tool with side effects
                return _reply(message, shown[0])
        with session.working():
            answered = await forward(message)
            raw = answered.get("result") if answered is not None else None
            if answered is None or not isinstance(raw, dict) or raw.get("resultType") == "input_required":
                return answered  # errors and MRTR rounds pass untouched
            try:
                presented, _ = await session.present_outcome(
                    None, tool, arguments, raw, full=full, client=client
                )
            except Exception as exc:  # never lose the answer: the original goes out unchanged
                logger.warning("mcpsqueeze: presenting %s failed (%r); result passed through", tool, exc)
                return answered
        return answered if presented is raw else {**answered, "result": presented}

    async def _frontend_answer(
        self, request: Message, answer: Message, session: Session, client: ClientProfile | None
    ) -> Message:
        """A compressed listing's own answer (a schema, the tool list): to a client with a profile, one
        it cannot keep whole is presented as a tool result is (stored, shrunk, recoverable)."""
        result = answer.get("result")
        if client is None or not isinstance(result, dict) or client.answer_limits().fits(text_of(result)):
            return answer
        tool = str(params_of(request).get("name") or "tools/call")
        presented, _ = await session.present_outcome(None, tool, {}, result, client=client)
        return {**answer, "result": presented}
