"""Client profiles: what each MCP client shows its model of a tool result, and what it keeps whole. Pure.

A client hands its model the text blocks, the JSON of ``structuredContent``, or both, keeps so much of
it (characters, bytes, lines or tokens) and cuts the rest its own way. ``PROFILES`` says so per client,
with the source of each fact (docs/clients.md shows the table). A session's profile is chosen from the
``clientInfo.name`` its client sends (or the ``client`` setting); a call that names its model refines it
(``ClientProfile.for_call``). Under a profile every answer fits the client's limit with ``MARGIN`` to
spare (``answer_limits``), a changed result is one block with its recovery hint first (``arrange``),
``structuredContent`` is shaped for a client that shows it (``listed_for`` withholds the outputSchema
of tools whose structured result may change), and tokens are counted of what the model sees
(``model_view``). No profile: everything as for any client. To add a client: one row in ``PROFILES``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import astuple, dataclass, field, replace
from typing import Any, Literal

from ._results import text_of

__all__ = [
    "MARGIN",
    "MAX_RESULT_SIZE_KEY",
    "PROFILES",
    "PROFILE_NAMES",
    "ClientLimits",
    "ClientProfile",
    "arrange",
    "choose",
    "client_info_of",
    "listed_for",
    "model_of",
    "model_view",
    "page_chars",
    "record_first",
    "shown_part",
]

Shows = Literal["text", "structured", "both"]
Cut = Literal["file", "middle", "head", "head-tail", "none"]

#: Every answer we send fits this share of the client's limit (measuring is ours, counting is theirs).
MARGIN = 0.9
#: The `tools/list` `_meta` key with which Claude Code lets one tool's results inline up to N characters
#: (instead of a file) and skips its token count for them.
MAX_RESULT_SIZE_KEY = "anthropic/maxResultSizeChars"
MAX_RESULT_SIZE_CAP = 500_000  # the most Claude Code accepts
#: Room a recover page leaves for its note (the next page's call) under the client's limit.
PAGE_NOTE_ROOM = 1_000
PAGE_NOTE_LINES = 3


@dataclass(frozen=True)
class ClientLimits:
    """The largest answer a client keeps whole, in each unit it counts (None: not counted).

    Tokens are counted as at most one per character: o200k and Claude's tokenizers give fewer tokens
    than characters for code, prose and JSON, so an answer of N characters has at most ~N tokens."""

    chars: int | None = None
    bytes: int | None = None
    lines: int | None = None
    tokens: int | None = None

    def scaled(self, share: float) -> ClientLimits:
        """These limits times ``share`` (the margin we keep under the client's own)."""
        return ClientLimits(*(None if n is None else int(n * share) for n in astuple(self)))

    @property
    def budget(self) -> int | None:
        """The most characters an answer may have (bytes count at least one per character)."""
        sizes = [n for n in (self.chars, self.bytes, self.tokens) if n is not None]
        return min(sizes) if sizes else None

    def over(self, text: str) -> float:
        """How far ``text`` is over these limits: its largest measure / limit (<= 1.0: it fits)."""
        worst = 0.0
        chars = len(text)
        for limit, size in (
            (self.chars, chars),
            (self.tokens, chars),
            (self.bytes, len(text.encode("utf-8", "surrogatepass")) if self.bytes is not None else 0),
            (self.lines, text.count("\n") + 1 if self.lines is not None else 0),
        ):
            if limit is not None:
                worst = max(worst, size / max(1, limit))
        return worst

    def fits(self, text: str) -> bool:
        return self.over(text) <= 1.0

    def describe(self) -> str:
        """The limits in words, such as "50,000 characters or 25,000 tokens" (the log, `config`)."""
        parts = [
            f"{value:,} {unit}"
            for value, unit in (
                (self.chars, "characters"),
                (self.bytes, "bytes"),
                (self.lines, "lines"),
                (self.tokens, "tokens"),
            )
            if value is not None
        ]
        return " or ".join(parts) if parts else "no known limit"


@dataclass(frozen=True)
class ClientProfile:
    """One client (a row of the table): how it introduces itself, what its model sees of a result,
    what it keeps whole and how it cuts the rest; each fact with its source (``sources``)."""

    name: str  # the `client` setting's value
    title: str
    names: tuple[str, ...]  # the `clientInfo.name` it sends (matched loosely, see `_normal`)
    versions: str  # the versions the facts were checked on
    shows: Shows  # what the model sees of a result that has structuredContent (an error: its text)
    limits: ClientLimits = ClientLimits()  # the largest result it keeps whole (its own units, no margin)
    per: Literal["result", "block"] = "result"  # whether `limits` count a whole result or each text block
    cut: Cut = "none"  # what it does past `limits`
    reads_max_result_size: bool = False  # honours `_meta["anthropic/maxResultSizeChars"]` in tools/list
    validates_output_schema: bool | None = None  # rejects a result not matching outputSchema (None: unknown)
    sources: Mapping[str, str] = field(default_factory=dict)
    # ClientLimits for calls whose model the client names (prefixes of the model's name), when they differ
    model_limits: tuple[tuple[tuple[str, ...], ClientLimits], ...] = ()
    # the largest error result (`isError`) it keeps whole, when it cuts errors shorter than `limits`
    error_limits: ClientLimits | None = None

    @property
    def shows_structured(self) -> bool:
        return self.shows != "text"

    def answer_limits(self, declared: int | None = None) -> ClientLimits:
        """What every answer we send must fit: the client's limits with our margin. ``declared``: the
        tool's listing declares ``maxResultSizeChars`` (and the client reads it): that many characters,
        and no token count."""
        if declared is not None and self.reads_max_result_size:
            return ClientLimits(chars=declared).scaled(MARGIN)
        return self.limits.scaled(MARGIN)

    def declared_size(self, page_size: int) -> int | None:
        """The ``maxResultSizeChars`` our own tools (the recover tool, ``<server>_invoke_tool``) declare
        to a client that reads it: the largest answer they send (a page and its note); else None."""
        if not self.reads_max_result_size:
            return None
        return min(MAX_RESULT_SIZE_CAP, int((page_size + PAGE_NOTE_ROOM) / MARGIN) + 1)

    def for_call(self, meta: Any) -> ClientProfile:
        """This profile for one call: the limits of the model the call names, when it names one."""
        model = model_of(meta)
        if model is None:
            return self
        for prefixes, limits in self.model_limits:
            if model.lower().startswith(prefixes):
                return replace(self, limits=limits)
        return self

    def for_error(self) -> ClientProfile:
        """This profile for an error result (``isError``): its error limits, when it has its own."""
        return self if self.error_limits is None else replace(self, limits=self.error_limits)

    def describe(self) -> str:
        """One line for the log and `mcpsqueeze config`: what the model sees and what is kept whole."""
        seen = {
            "text": "the text blocks",
            "structured": "the JSON of structuredContent when a result has one (else the text)",
            "both": "the text blocks and the JSON of structuredContent",
        }[self.shows]
        if self.limits == ClientLimits():
            return f"its model sees {seen}; no limit of its is known, so results are sized as for any client"
        kept = self.limits.describe()
        per = " per text block" if self.per == "block" else " per result"
        if self.error_limits is not None:
            per += f" ({self.error_limits.describe()} of an error)"
        cut = {
            "file": "saves the rest to a file",
            "middle": "cuts out the middle",
            "head": "keeps the head",
            "head-tail": "keeps a head and a tail",
            "none": "cuts nothing",
        }[self.cut]
        answers = self.answer_limits().describe()
        return f"its model sees {seen}; it keeps {kept}{per} and {cut}; answers fit {answers}"


# -- the table ---------------------------------------------------------------------------------------------

_CLAUDE = "checked with the real CLI (2.1.332) against a scripted model endpoint on loopback"
_CODEX = "checked with the real CLI (0.171.0) against a scripted Responses endpoint on loopback"

PROFILES: tuple[ClientProfile, ...] = (
    ClientProfile(
        name="claude-code",
        title="Claude Code",
        names=("claude-code",),
        versions="2.1.x (checked on 2.1.332)",
        shows="structured",
        limits=ClientLimits(chars=50_000, tokens=25_000),
        cut="file",
        reads_max_result_size=True,
        error_limits=ClientLimits(chars=11_000),
        sources={
            "clientInfo.name": "the initialize it sends (clientInfo {name: claude-code}); " + _CLAUDE,
            "model sees": "anthropics/claude-code#79944, #55677; " + _CLAUDE,
            "limits": "over 50,000 characters a result goes to a file (the model gets a 2 KB preview, or an "
            "error naming the file over MAX_MCP_OUTPUT_TOKENS, default 25,000); " + _CLAUDE,
            "cut": "file with a 2 KB head preview; isError results are cut at about 11,000 characters",
            "maxResultSizeChars": "anthropics/claude-code#42869, #78478: tools/list _meta "
            '"anthropic/maxResultSizeChars" (up to 500,000) inlines larger results and skips the token count',
            "outputSchema": "not shown to the model; it uses the TypeScript SDK's client, which checks "
            "structuredContent against outputSchema (not verified in the CLI)",
        },
    ),
    ClientProfile(
        name="codex",
        title="Codex CLI",
        names=("codex-mcp-client", "codex-vscode", "codex"),
        versions="0.171.x",
        shows="structured",
        limits=ClientLimits(bytes=12_000),
        cut="middle",
        model_limits=((("gpt-", "o3", "o4", "codex-"), ClientLimits(bytes=48_000)),),
        sources={
            "clientInfo.name": 'clientInfo {"name":"codex-mcp-client","title":"Codex"}; ' + _CODEX,
            "model sees": "openai/codex codex-rs/protocol/src/models.rs: non-null structuredContent becomes "
            "the whole tool output as compact JSON; " + _CODEX,
            "limits": "10,000 bytes x 1.2 for a custom provider's model; 10,000 tokens x 1.2 (4 bytes a "
            "token) for the models in its own list, named per call in _meta x-codex-turn-metadata; " + _CODEX,
            "cut": "codex-rs/core/src/truncate.rs: head and tail kept 50/50, the middle replaced by a note; "
            "text blocks past the budget dropped as [omitted N text items]; openai/codex#6544, #5913, #7906",
        },
    ),
    ClientProfile(
        name="copilot-cli",
        title="GitHub Copilot CLI",
        names=("github-copilot-developer",),
        versions="0.0.4xx-1.0.x (issues of 2026)",
        shows="both",
        limits=ClientLimits(bytes=10_240),
        cut="middle",
        sources={
            "clientInfo.name": "github/copilot-cli#1268, #432 (clientInfo github-copilot-developer)",
            "model sees": "github/copilot-cli#4515: both content and structuredContent reach the model "
            "(#3258: structuredContent only, in earlier versions)",
            "limits": "github/copilot-cli#1732: MCP results cut to 10 KB (the middle dropped) before its "
            "30 KB spill to a file",
        },
    ),
    ClientProfile(
        name="vscode",
        title="VS Code (Copilot Chat)",
        names=("visual studio code", "code - oss"),
        versions="1.10x (2026)",
        shows="structured",
        limits=ClientLimits(bytes=8_192),
        cut="file",
        validates_output_schema=False,
        sources={
            "clientInfo.name": "microsoft/vscode mcpServerRequestHandler.ts: productService.nameLong",
            "model sees": "microsoft/vscode mcpLanguageModelToolContribution.ts: structuredContent, as JSON, "
            "in place of the text blocks",
            "limits": "microsoft/vscode#329276: chat.agent.largeToolResultsToDisk.thresholdBytes, 8 KB: "
            "larger results go to a file, the model gets a path and a preview",
            "outputSchema": "its own JSON-RPC handler does not check results against outputSchema",
        },
    ),
    ClientProfile(
        name="cursor",
        title="Cursor",
        names=("cursor-vscode",),
        versions="unverified (closed source)",
        shows="text",
        sources={
            "clientInfo.name": "reported in server logs (Cursor does not publish it)",
            "model sees": "not published: treated as any client",
        },
    ),
    ClientProfile(
        name="gemini-cli",
        title="Gemini CLI",
        names=("gemini-cli-mcp-client",),
        versions="0.x (2026)",
        shows="text",
        validates_output_schema=False,
        sources={
            "clientInfo.name": "google-gemini/gemini-cli packages/core/src/tools/mcp-client.ts",
            "model sees": "google-gemini/gemini-cli packages/core/src/tools/mcp-tool.ts: the content only",
            "limits": "none for MCP results (its 4,000,000-character truncation is the shell tool's)",
            "outputSchema": "mcp-client.ts: a lenient validator, so bad schemas never block it",
        },
    ),
    ClientProfile(
        name="qwen-code",
        title="Qwen Code",
        names=("qwen-cli-mcp-client", "qwen-code"),
        versions="0.x (2026)",
        shows="text",
        limits=ClientLimits(chars=25_000, lines=1_000),
        per="block",
        cut="head-tail",
        sources={
            "clientInfo.name": "QwenLM/qwen-code packages/core/src/tools/mcp-client.ts: "
            "qwen-cli-mcp-client-<server>",
            "model sees": "QwenLM/qwen-code packages/core/src/tools/mcp-tool.ts: the content blocks only",
            "limits": "QwenLM/qwen-code#2439, #2446: 25,000 characters / 1,000 lines per text part, the "
            "rest saved to a file (newer releases allow 500,000 characters with a 2,000-character preview)",
            "cut": "packages/core/src/utils/truncation.ts: a head (1/5) and a tail (4/5) of the lines",
        },
    ),
    ClientProfile(
        name="opencode",
        title="opencode",
        names=("opencode",),
        versions="1.x (2026)",
        shows="text",
        limits=ClientLimits(bytes=51_200, lines=2_000),
        cut="head",
        validates_output_schema=True,
        sources={
            "clientInfo.name": "sst/opencode packages/opencode/src/mcp/index.ts: Client({name: 'opencode'})",
            "model sees": "packages/opencode/src/session/prompt.ts: the text blocks joined, then truncated",
            "limits": "packages/opencode/src/tool/truncation.ts: 2,000 lines or 50 KB, the head kept, the "
            "whole saved to a file",
            "outputSchema": "remotion-dev/remotion#6275: its TypeScript SDK client rejects a result "
            "without structuredContent for a tool with outputSchema",
        },
    ),
)

PROFILE_NAMES: tuple[str, ...] = tuple(p.name for p in PROFILES)
_BY_NAME = {p.name: p for p in PROFILES}


def _normal(name: str) -> str:
    """A client name as matched: lower case, letters and digits only ("Visual Studio Code - Insiders"
    is "visualstudiocodeinsiders")."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def match_client(name: str) -> ClientProfile | None:
    """The profile whose names begin ``name`` (loosely: case and separators ignored), the longest first:
    ``qwen-cli-mcp-client-fs`` is Qwen Code; ``codex-vscode`` is Codex."""
    wanted = _normal(name)
    best: tuple[int, ClientProfile] | None = None
    for profile in PROFILES:
        for known in profile.names:
            key = _normal(known)
            if key and wanted.startswith(key) and (best is None or len(key) > best[0]):
                best = (len(key), profile)
    return None if best is None else best[1]


@dataclass(frozen=True)
class Selection:
    """The profile a session (or one stateless request) gets, and why, in words for the log."""

    profile: ClientProfile | None
    reason: str

    def describe(self) -> str:
        if self.profile is None:
            return f"no client profile ({self.reason}): results are shaped as for any client"
        return f"client profile {self.profile.name} ({self.reason}): {self.profile.describe()}"


def client_info_of(params: Any) -> Any:
    """The clientInfo of an `initialize` request's params, or of a 2026-07-28 request's ``_meta``."""
    if not isinstance(params, dict):
        return None
    if "clientInfo" in params:
        return params["clientInfo"]
    meta = params.get("_meta")
    return meta.get("io.modelcontextprotocol/clientInfo") if isinstance(meta, dict) else None


def choose(setting: str, client_info: Any) -> Selection:
    """The profile for ``setting`` (the `client` knob: "auto", "none" or a profile's name) and a
    client that introduced itself with ``client_info`` (its `clientInfo` object, or None)."""
    if setting == "none":
        return Selection(None, "client = none")
    if setting != "auto":
        return Selection(_BY_NAME[setting], f"client = {setting}")
    name = client_info.get("name") if isinstance(client_info, dict) else None
    if not isinstance(name, str) or not name:
        return Selection(None, "the client sent no clientInfo.name")
    version = client_info.get("version") if isinstance(client_info, dict) else None
    said = f"clientInfo.name {name[:80]!r}" + (f" {str(version)[:40]}" if isinstance(version, str) else "")
    profile = match_client(name)
    if profile is None:
        return Selection(None, f"{said} is not a known client")
    return Selection(profile, said)


def model_of(meta: Any) -> str | None:
    """The model a call names in its ``_meta`` (Codex: ``x-codex-turn-metadata``, an object or its JSON
    text, with a ``model``), or None."""
    if not isinstance(meta, dict):
        return None
    turn = meta.get("x-codex-turn-metadata")
    if isinstance(turn, str):
        try:
            turn = json.loads(turn)
        except (ValueError, RecursionError):
            return None
    model = turn.get("model") if isinstance(turn, dict) else None
    return model if isinstance(model, str) and model else None


# -- what the model sees ------------------------------------------------------------------------------------


def structured_json(value: Any) -> str:
    """structuredContent as the clients hand it to their model: compact JSON, characters unescaped."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return ""


def model_view(result: dict[str, Any], profile: ClientProfile | None) -> tuple[str, str]:
    """What ``profile``'s model reads of ``result``, and which part that is ("text", "structuredContent"
    or "both"): the text blocks, unless the client shows structuredContent and the result (not an
    error) has one. No profile: the text blocks."""
    text = text_of(result)
    part = shown_part(result, profile)
    if part == "text":
        return text, part
    shown = structured_json(result["structuredContent"])
    if part == "both":
        return (f"{text}\n{shown}" if text else shown), part
    return shown, part


def shown_part(result: dict[str, Any], profile: ClientProfile | None) -> str:
    """Which part of ``result`` ``profile``'s model reads (see ``model_view``), without rendering it."""
    if profile is None or not profile.shows_structured or result.get("isError") is True:
        return "text"
    if result.get("structuredContent") is None:
        return "text"
    return "both" if profile.shows == "both" else "structuredContent"


# -- fitting answers ----------------------------------------------------------------------------------------

_HINTS = ("[mcpsqueeze]", '{"truncation":')  # what an answer that opens with its recovery hint starts with
_RECORD_KEY = ',"truncation":'


def record_first(text: str, record: Mapping[str, Any]) -> str:
    """A JSON object preview whose truncation ``record`` is its last member, with that member moved to
    the front (the same characters, still the same JSON object); any other text as it is."""
    at = text.rfind(_RECORD_KEY)
    if at <= 1 or not text.startswith("{") or not text.endswith("}"):
        return text
    value = text[at + len(_RECORD_KEY) : -1]
    try:
        if json.loads(value) != record:
            return text
    except (ValueError, RecursionError):
        return text
    return "{" + _RECORD_KEY[1:] + value + "," + text[1:at] + "}"


def arrange(texts: list[str], notice: str | None, head: str | None = None) -> str:
    """A changed result's text blocks and notice as one block, the recovery hint first: the notice
    (or, when there is none and the text does not open with a hint, ``head``: the one-line hint), then
    the texts. One block, because a client that cuts past its budget drops the later ones; the hint
    first, because every client's cut keeps the head."""
    body = "\n".join(texts)
    first = notice if notice is not None else (None if body.startswith(_HINTS) else head)
    return body if first is None else f"{first}\n{body}"


def page_chars(text: str | Callable[[int], Iterable[str]], limits: ClientLimits, page_size: int) -> int:
    """The characters of one recover page of ``text`` (or of the text whose pages of a given size
    ``text(size)`` yields): at most ``page_size``, and so that every page with its note fits ``limits``
    (bytes and lines measured on the pages themselves)."""
    pages = text if callable(text) else lambda size: (text[i : i + size] for i in range(0, len(text), size))
    size = page_size
    if limits.budget is not None:
        size = min(size, max(1, limits.budget - PAGE_NOTE_ROOM))
    room = ClientLimits(
        bytes=None if limits.bytes is None else max(1, limits.bytes - PAGE_NOTE_ROOM),
        lines=None if limits.lines is None else max(1, limits.lines - PAGE_NOTE_LINES),
    )
    if room.bytes is None and room.lines is None:
        return max(1, size)
    for _ in range(64):
        worst = max((room.over(page) for page in pages(size)), default=0.0)
        if worst <= 1.0 or size <= 1:
            break
        size = max(1, min(size - 1, int(size / worst * 0.98)))
    return max(1, size)


def may_change_structured(policy: Any) -> bool:
    """Whether a tool's results may be changed at all under ``policy`` (some stage may run on them)."""
    return bool(
        policy.shrink
        or policy.dedup
        or policy.toonify
        or policy.query is not None
        or policy.drop_duplicate_structured
    )


def listed_for(
    profile: ClientProfile | None,
    tools: list[Any],
    ours: Iterable[str],
    page_size: int,
    may_change: Any,
) -> list[Any]:
    """A tools/list page as ``profile``'s client should see it: each tool whose results we may change
    (``may_change(name)``) without its ``outputSchema`` when the client shows structuredContent (it
    would reject the changed result, and its model never reads the schema); and our own tools (``ours``:
    the recover tool, ``<server>_invoke_tool``) declaring ``maxResultSizeChars`` for the largest answer
    they send, to a client that reads it. The same list when there is nothing to change."""
    if profile is None:
        return tools
    mine = set(ours)
    declared = profile.declared_size(page_size)
    out: list[Any] = []
    for tool in tools:
        if not isinstance(tool, dict):
            out.append(tool)
            continue
        name = tool.get("name")
        if profile.shows_structured and "outputSchema" in tool and name not in mine and may_change(name):
            tool = {k: v for k, v in tool.items() if k != "outputSchema"}
        if declared is not None and name in mine:
            meta = tool.get("_meta")
            meta = {**(meta if isinstance(meta, dict) else {}), MAX_RESULT_SIZE_KEY: declared}
            tool = {**tool, "_meta": meta}
        out.append(tool)
    return out
