"""`full` (core/_full.py, `Pipeline.full`): the original of the same call, never a side effect run again."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from mcpsqueeze._clients import PROFILES, ClientProfile
from mcpsqueeze._results import text_of
from mcpsqueeze._voice import McpVoice
from mcpsqueeze.core import DEFAULT_PAGE_SIZE, RecoverRequest, Session, _pipeline, recover
from mcpsqueeze.core._full import (
    CallsShown,
    Shown,
    call_key,
    full_page_note,
    latest,
    listed_entry,
    may_run_again,
    not_run_again,
)
from mcpsqueeze.core._pipeline import Call, Pipeline
from mcpsqueeze.core._reshape import ProjectStage
from mcpsqueeze.core._stages import DedupStage, ShrinkStage, Workers
from mcpsqueeze.recovery import FileStore, MemoryCache, RecoveryStore, new_response_id
from mcpsqueeze.recovery._redis import RedisStore
from mcpsqueeze.settings import Policy, Settings
from rawclient import assert_golden
from realservers import RedisServer, needs_redis, redis_server

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).with_name("golden")
BUDGET = 4000
WRITES: dict[str, Any] = {"name": "write", "annotations": {"destructiveHint": False}}
READS: dict[str, Any] = {"name": "read", "annotations": {"readOnlyHint": True}}


def big_result(n: int = 400) -> dict[str, Any]:
    rows = [{"id": i, "title": f"row {i}", "body": "lorem ipsum " * 8} for i in range(n)]
    return {"content": [{"type": "text", "text": json.dumps({"rows": rows})}], "isError": False}


def small_result() -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "created"}], "isError": False}


def conversation(store: RecoveryStore | None, scope: str | None = None) -> Pipeline:
    """`scope`: the conversation's name in a shared store."""
    workers = Workers(2)
    stages: list[Any] = []
    if store is not None:
        stages = [DedupStage(store, workers, None), ShrinkStage(store, workers)]
    return Pipeline(stages, policy_for=lambda server, tool: Policy(budget=BUDGET), store=store, scope=scope)


def call(number: int, tool: str = "write", full: bool = False, **arguments: Any) -> Call:
    return Call(server="s", tool=tool, arguments=arguments, number=number, full=full)


class Catalog:
    """A tool's listing entry, counting how often `full` had to ask for it."""

    def __init__(self, entry: Mapping[str, Any] | None) -> None:
        self.entry = entry
        self.asked = 0

    async def __call__(self) -> Mapping[str, Any] | None:
        self.asked += 1
        return self.entry


@pytest.fixture
def store(tmp_path: Path) -> RecoveryStore:
    return RecoveryStore(MemoryCache(), FileStore(tmp_path / "recovery"))


async def test_full_answers_a_changed_result_with_its_stored_original_without_asking_for_the_tool(
    store: RecoveryStore,
) -> None:
    steps = conversation(store)
    _, outcome = await steps.present(call(1, a=1, b=2), big_result())
    assert outcome.action == "shrink"
    listing = Catalog(WRITES)
    answer = await steps.full(call(2, full=True, b=2, a=1), listing)  # the same call, keys in another order
    assert answer is not None
    original, answered = answer
    assert original == big_result() and answered.action == "full"
    assert answered.response_id == outcome.response_id
    assert listing.asked == 0  # nothing about the tool was needed, nothing ran


async def test_full_answers_a_deduplicated_result_with_its_original(store: RecoveryStore) -> None:
    steps = conversation(store)
    await steps.present(call(1, tool="read", page=1), big_result(20))
    _, pointer = await steps.present(call(2, tool="read", page=2), big_result(20))
    assert pointer.action == "dedup"
    answer = await steps.full(call(3, tool="read", full=True, page=2), Catalog(READS))
    assert answer is not None and answer[0] == big_result(20)


async def test_full_after_a_projection_returns_the_backends_result_not_the_projection(
    store: RecoveryStore,
) -> None:
    workers = Workers(2)
    steps = Pipeline(
        [ProjectStage(store, workers), ShrinkStage(store, workers)],
        policy_for=lambda server, tool: Policy(budget=300, query="rows[].title"),
        store=store,
    )
    shown, outcome = await steps.present(call(1), big_result())
    assert outcome.action == "shrink" and "lorem" not in json.dumps(shown)
    answer = await steps.full(call(2, full=True), Catalog(WRITES))
    assert answer is not None and answer[0] == big_result()


async def test_a_result_shown_whole_runs_a_read_only_tool_again_and_refuses_any_other(
    store: RecoveryStore,
) -> None:
    steps = conversation(store)
    await steps.present(call(1, tool="read"), small_result())
    await steps.present(call(2, tool="write"), small_result())
    assert await steps.full(call(3, tool="read", full=True), Catalog(READS)) is None  # run it
    answer = await steps.full(call(4, tool="write", full=True), Catalog(WRITES))
    assert answer is not None
    refusal, outcome = answer
    assert refusal["isError"] is True and outcome.action == "error"
    assert "call #2 was shown to you whole" in refusal["content"][0]["text"]


async def test_a_full_call_that_ran_leaves_the_record_of_the_call_it_repeats(store: RecoveryStore) -> None:
    steps = conversation(store)
    _, outcome = await steps.present(call(1, tool="read"), big_result())
    await steps.present(call(2, tool="read", full=True), big_result(10))  # a full call that ran
    answer = await steps.full(call(3, tool="read", full=True), Catalog(READS))
    assert answer is not None and answer[1].response_id == outcome.response_id


async def test_an_original_no_longer_held_refuses_a_tool_with_side_effects_and_says_why(
    tmp_path: Path,
) -> None:
    memory = MemoryCache(ttl=3600, max_entries=1)
    steps = conversation(RecoveryStore(memory, None))
    await steps.present(call(1, n=1), big_result())
    await steps.present(call(2, n=2), big_result(300))  # evicts the first original
    listing = Catalog(WRITES)
    answer = await steps.full(call(3, full=True, n=1), listing)
    assert answer is not None and listing.asked == 1
    text = answer[0]["content"][0]["text"]
    assert "the original of call #1 is no longer held (" in text and "evicted" in text
    assert "call it without full" in text


async def test_a_call_never_made_here_runs_only_a_tool_that_says_it_may_run_again() -> None:
    steps = conversation(None)  # a conversation that keeps no originals at all
    assert await steps.full(call(1, tool="read", full=True), Catalog(READS)) is None
    idempotent = {"name": "put", "annotations": {"idempotentHint": True}}
    assert await steps.full(call(2, tool="put", full=True), Catalog(idempotent)) is None
    answer = await steps.full(call(3, tool="write", full=True), Catalog(None))  # not even listed
    assert answer is not None and "holds no original of that call" in answer[0]["content"][0]["text"]


async def test_one_conversation_never_answers_with_another_conversations_original(
    store: RecoveryStore,
) -> None:
    first, second = conversation(store), conversation(store)
    await first.present(call(1), big_result())
    answer = await second.full(call(1, full=True), Catalog(WRITES))
    assert answer is not None and answer[0]["isError"] is True


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


def replicas(redis: RedisServer, tenant: str = "alice") -> tuple[RecoveryStore, RecoveryStore]:
    """Two replicas' stores of one tenant: each its own memory, one Redis."""
    prefix = f"t{new_response_id()[:8]}"
    return tuple(  # type: ignore[return-value]
        RecoveryStore(MemoryCache(), None, RedisStore(redis.url, 3600.0, prefix=prefix)).scoped(tenant)
        for _ in range(2)
    )


@needs_redis
async def test_full_on_another_replica_answers_with_the_original_of_a_call_it_did_not_serve(
    redis: RedisServer,
) -> None:
    one, two = replicas(redis)
    _, outcome = await conversation(one, "conv").present(call(1, a=1), big_result())
    assert outcome.action == "shrink"
    listing = Catalog(WRITES)
    answer = await conversation(two, "conv").full(call(1, full=True, a=1), listing)
    assert answer is not None and answer[0] == big_result() and answer[1].action == "full"
    assert listing.asked == 0  # nothing ran
    for elsewhere in (conversation(two, "other conv"), conversation(two.scoped("bob"), "conv")):
        refused = await elsewhere.full(call(1, full=True, a=1), Catalog(WRITES))
        assert refused is not None
        assert "holds no original of that call" in refused[0]["content"][0]["text"]


@needs_redis
async def test_a_call_shown_whole_on_one_replica_after_a_changed_one_on_another_is_the_last_same_call(
    redis: RedisServer,
) -> None:
    one, two = replicas(redis)
    on_one, on_two = conversation(one, "conv"), conversation(two, "conv")
    await on_two.present(call(1), big_result())
    await on_one.present(call(1), small_result())  # the same call, later, shown whole
    for steps in (on_two, on_one):  # on_two's own record says changed: the shared one is later
        answer = await steps.full(call(2, full=True), Catalog(WRITES))
        assert answer is not None and answer[0]["isError"] is True
        assert "call #1 was shown to you whole" in answer[0]["content"][0]["text"]
    await on_two.present(call(3), big_result(300))  # changed again: full answers with that original
    answer = await on_one.full(call(4, full=True), Catalog(WRITES))
    assert answer is not None and answer[0] == big_result(300)


@needs_redis
async def test_a_replica_answers_full_from_its_own_record_when_the_shared_one_is_gone(
    redis: RedisServer,
) -> None:
    one, _ = replicas(redis)
    steps = conversation(one, "conv")
    await steps.present(call(1), big_result())
    redis.stop()
    try:
        answer = await steps.full(call(2, full=True), Catalog(WRITES))  # memory still holds it
        assert answer is not None and answer[0] == big_result()
    finally:
        redis.start()


@needs_redis
async def test_a_session_sticky_to_its_replica_keeps_the_record_of_its_calls_to_itself(
    redis: RedisServer,
) -> None:
    settings = Settings.make(
        target=["x"], recovery="memory", recovery_url=redis.url, retention=None, budget=BUDGET
    )
    one, two = Session(settings), Session(settings)  # two replicas
    for sticky, reached in ((True, False), (False, True)):
        name = f"conversation-{sticky}"
        await one.for_caller("alice", name, sticky=sticky).present_outcome("s", "write", {}, big_result())
        there = await two.for_caller("alice", name, sticky=sticky).full_outcome("s", "write", {})
        assert there is not None and (there[0] == big_result()) is reached
    one.close()
    two.close()


def test_of_two_records_of_a_call_the_later_one_is_the_last_same_call() -> None:
    changed, whole = Shown(1, "a" * 32, at=10.0), Shown(1, None, at=11.0)
    assert latest(changed, whole) == whole and latest(whole, changed) == whole
    assert (
        latest(None, changed) == changed and latest(changed, None) == changed and latest(None, None) is None
    )
    assert Shown.from_record(whole.record()) == whole and Shown.from_record(changed.record()) == changed
    for bad in (b"", b"[]", b'{"number": "1", "response_id": null, "at": 1}', b'{"number": 1}'):
        assert Shown.from_record(bad) is None


def test_only_a_true_read_only_or_idempotent_hint_lets_a_tool_run_again() -> None:
    assert may_run_again({"annotations": {"readOnlyHint": True}})
    assert may_run_again({"annotations": {"readOnlyHint": False, "idempotentHint": True}})
    assert not may_run_again({"annotations": {"readOnlyHint": "true"}})
    assert not may_run_again({"annotations": {"destructiveHint": False}})
    assert not may_run_again({"name": "x"}) and not may_run_again(None)
    assert not may_run_again({"annotations": ["readOnlyHint"]})


def test_the_same_call_is_one_key_whatever_the_order_of_its_arguments() -> None:
    assert call_key("s", "t", {"a": 1, "b": {"y": 2, "x": 1}}) == call_key(
        "s", "t", {"b": {"x": 1, "y": 2}, "a": 1}
    )
    assert call_key("s", "t", {"a": 1}) != call_key("s", "u", {"a": 1})
    assert call_key("s", "t", {"a": 1}) != call_key("r", "t", {"a": 1})


async def test_arguments_that_are_not_json_still_key_their_call(store: RecoveryStore) -> None:
    steps = conversation(store)
    odd = {"ids": {3, 1}, "ratio": float("nan")}
    await steps.present(call(1, **odd), small_result())
    answer = await steps.full(call(2, full=True, **odd), Catalog(WRITES))
    assert answer is not None and "call #1 was shown to you whole" in answer[0]["content"][0]["text"]


def test_a_conversation_forgets_the_least_recently_made_calls_first() -> None:
    shown = CallsShown(limit=2)
    shown.note("a", Shown(1, None))
    shown.note("b", Shown(2, None))
    shown.note("a", Shown(3, "f" * 32))
    shown.note("c", Shown(4, None))
    assert shown.last("b") is None and shown.last("a") == Shown(3, "f" * 32) and shown.last("c") is not None


async def test_a_listed_entry_is_found_by_name() -> None:
    assert await listed_entry([WRITES, READS], "read")() == READS
    assert await listed_entry([WRITES], "read")() is None


def test_the_errors_of_full_are_pinned_by_their_golden_file() -> None:
    texts = [
        not_run_again("create_entities", None)["content"][0]["text"],
        not_run_again("create_entities", Shown(3, None))["content"][0]["text"],
        not_run_again("create_entities", Shown(3, "0" * 32), "Unknown response id: expired after 300 s.")[
            "content"
        ][0]["text"],
    ]
    assert_golden(GOLDEN / "full_not_run_again.txt", "\n\n".join(texts) + "\n")


async def test_full_answers_from_the_files_when_memory_no_longer_holds_the_original(tmp_path: Path) -> None:
    store = RecoveryStore(MemoryCache(ttl=3600, max_entries=1), FileStore(tmp_path / "recovery"))
    steps = conversation(store)
    await steps.present(call(1, n=1), big_result())
    await steps.present(call(2, n=2), big_result(300))  # memory now holds only this one
    answer = await steps.full(call(3, full=True, n=1), Catalog(WRITES))
    assert answer is not None and answer[0] == big_result()


CODEX = next(p for p in PROFILES if p.name == "codex")
CLAUDE_CODE = next(p for p in PROFILES if p.name == "claude-code")


def as_client(c: Call, client: ClientProfile) -> Call:
    c.client = client
    return c


async def follow(store: RecoveryStore, page: dict[str, Any], client: ClientProfile) -> list[dict[str, Any]]:
    """The recover tool's pages a `full` page names, followed to the last, as an agent follows them."""
    fit = client.answer_limits(client.declared_size(DEFAULT_PAGE_SIZE))
    pages, arguments = [], page["_meta"].get("mcpsqueeze/next")
    while arguments:
        pages.append(recover(store, RecoverRequest.parse(arguments), DEFAULT_PAGE_SIZE, fit))
        arguments = pages[-1]["_meta"].get("mcpsqueeze/next")
    return pages


@pytest.mark.parametrize("client", [CODEX, CLAUDE_CODE], ids=["codex", "claude-code"])
async def test_a_full_answer_larger_than_the_client_keeps_is_its_first_page_and_the_rest_follows_exactly(
    store: RecoveryStore, client: ClientProfile
) -> None:
    steps = conversation(store)
    original = big_result(800)
    await steps.present(as_client(call(1, a=1), client), original)
    answer = await steps.full(as_client(call(2, full=True, a=1), client), Catalog(WRITES))
    assert answer is not None
    page, outcome = answer
    assert outcome.action == "full" and len(page["content"]) == 1
    note, chunk = page["content"][0]["text"].split("\n", 1)
    pages = page["_meta"]["mcpsqueeze/page"]["pages"]
    assert note.startswith(f"[mcpsqueeze] full: the original of this call is {len(text_of(original)):,}")
    assert f"page 1 of {pages}" in note and outcome.response_id in note
    assert client.answer_limits().fits(page["content"][0]["text"])
    rest = await follow(store, page, client)
    assert 1 + len(rest) == pages and all(client.answer_limits(200_000).fits(text_of(p)) for p in rest)
    assert chunk + "".join(p["content"][0]["text"] for p in rest) == text_of(original)


async def test_a_full_answer_the_client_keeps_whole_and_any_without_a_profile_is_the_original(
    store: RecoveryStore,
) -> None:
    steps = conversation(store)
    await steps.present(call(1, a=1), big_result())
    assert (await steps.full(call(2, full=True, a=1), Catalog(WRITES)) or ({},))[0] == big_result()
    await steps.present(as_client(call(3, a=2), CODEX), big_result(50))  # shrunk, yet Codex keeps it whole
    small = await steps.full(as_client(call(4, full=True, a=2), CODEX), Catalog(WRITES))
    assert small is not None and small[0] == big_result(50)


async def test_a_full_call_that_ran_again_keeps_its_original_before_showing_its_first_page(
    store: RecoveryStore,
) -> None:
    steps = conversation(store)
    assert await steps.full(as_client(call(1, "read", full=True), CODEX), Catalog(READS)) is None
    page, outcome = await steps.present(as_client(call(1, "read", full=True), CODEX), big_result())
    assert (
        outcome.response_id is not None and page["_meta"]["truncation"]["response_id"] == outcome.response_id
    )
    assert json.loads(store.get(outcome.response_id)) == big_result()
    assert page["content"][0]["text"].split("\n", 1)[1] in text_of(big_result())


async def test_a_full_call_that_ran_again_encodes_its_original_off_the_event_loop(
    store: RecoveryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread, encoded_on, dumps = threading.current_thread(), [], _pipeline.dumps

    def recording_dumps(value: Any) -> bytes:
        encoded_on.append(threading.current_thread())
        return dumps(value)

    monkeypatch.setattr(_pipeline, "dumps", recording_dumps)
    _, outcome = await conversation(store).present(as_client(call(1, "read", full=True), CODEX), big_result())
    assert outcome.response_id is not None and encoded_on and loop_thread not in encoded_on


async def test_a_full_answer_whose_text_repeats_its_structured_content_is_its_text_alone() -> None:
    text = "x\n" * 4_500  # Codex keeps its 9,000 bytes, not the 13,500 of its JSON (each newline escaped)
    result = {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}}
    wider = {**result, "structuredContent": {"result": text, "lines": list(range(2_000))}}
    stored = RecoveryStore(MemoryCache(), None)
    page, _ = await conversation(stored).present(as_client(call(1, "read", full=True), CODEX), dict(result))
    assert "structuredContent" not in page and page["content"][0]["text"].endswith("\n" + text)
    assert page["_meta"]["mcpsqueeze/page"]["pages"] == 1 and "left out" in page["content"][0]["text"]
    kept, _ = await conversation(stored).present(as_client(call(1, "read", full=True), CODEX), wider)
    assert kept == wider  # its text alone would not be what the model sees


def test_the_note_of_a_full_page_is_pinned_by_its_golden_file() -> None:
    voice = McpVoice()
    texts = [
        full_page_note("Codex CLI", 200_000, 10_400, 18, voice.call("0" * 32, window=(10_400, 189_600))),
        full_page_note("Claude Code", 30_000, 21_500, 2, voice.call("0" * 32, window=(21_500, 8_500))),
        full_page_note("Codex CLI", 9_001, 9_001, 1, None),
    ]
    assert_golden(GOLDEN / "full_first_page.txt", "\n\n".join(texts) + "\n")


def long_error(lines: int = 1_500) -> dict[str, Any]:
    trace = "".join(f'  File "app/module_{i}.py", line {i}, in handler_{i}\n' for i in range(lines))
    return {
        "content": [{"type": "text", "text": f"Traceback (most recent call last):\n{trace}"}],
        "isError": True,
    }


async def test_an_error_longer_than_the_client_keeps_is_shrunk_its_hint_first_and_still_an_error(
    store: RecoveryStore,
) -> None:
    steps = conversation(store)
    error = long_error(300)  # more than Claude Code keeps of an error, less than of any other result
    shown, outcome = await steps.present(as_client(call(1, "read"), CLAUDE_CODE), error)
    assert shown["isError"] is True and outcome.action == "shrink" and len(shown["content"]) == 1
    assert shown["content"][0]["text"].startswith("[mcpsqueeze]")
    assert outcome.response_id in shown["content"][0]["text"][:500]
    assert len(text_of(shown)) <= 11_000 * 0.9 < len(text_of(error)) < 22_500
    assert json.loads(store.get(outcome.response_id)) == error
    _, repeated = await steps.present(as_client(call(2, "read"), CLAUDE_CODE), error)
    assert repeated.action == "shrink"  # an error is never a pointer to an earlier one


async def test_an_error_the_client_keeps_whole_or_any_without_a_profile_passes_as_it_came(
    store: RecoveryStore,
) -> None:
    steps = conversation(store)
    for shown_to in (call(1, "read"), as_client(call(2, "read"), CODEX)):
        error = long_error(30) if shown_to.client is not None else long_error()
        shown, outcome = await steps.present(shown_to, error)
        assert shown is error and outcome.action == "error"
