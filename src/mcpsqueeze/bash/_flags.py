"""A tool's input JSON schema as command-line flags, and argv parsed back into its arguments. Pure and
stdlib-only. Every property becomes ``--kebab-name``: strings as given; numbers coerced and range-checked;
enums checked; booleans ``--flag``, ``--no-flag`` or ``--flag true|false``; arrays by repetition or one
JSON array; objects (and anything without one type) as JSON. ``--name=value`` works everywhere; ``--json
'{...}'`` or ``--json -`` gives the whole input (flags override its keys); ``--full``, ``--raw`` and
``-h/--help`` are the shim's own. Local ``$ref``, ``[X, "null"]`` and ``anyOf/oneOf`` with null read as X.
Every error says what to type.
"""

from __future__ import annotations

from mcpsqueeze._errors import UsageError

from ._fastjson import dumps, loads  # json.dumps/loads on the C accelerator, without `re`
from ._names import command_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["BOUNDS", "CONTROL_FLAGS", "Flag", "did_you_mean", "parse_call", "tool_flags"]

#: Flags the shim keeps for itself; a property with one of these names becomes ``--arg-NAME``.
CONTROL_FLAGS = frozenset({"json", "full", "raw", "help"})

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})
_KINDS = ("string", "integer", "number", "boolean", "array", "object")  # else "any": JSON or text
_MAX_REF_DEPTH = 32
_MISSING = object()
_INF = float("inf")


def _is_int(text: str) -> bool:
    """``[+-]?[0-9]+``, ASCII digits only (``str.isdigit`` alone also takes ``²`` and ``٣``)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    return digits.isascii() and digits.isdigit()


class Flag:
    """One property of the input schema, as a flag."""

    def __init__(self, name: str, prop: str, schema: dict[str, object], required: bool) -> None:
        self.name = name
        self.prop = prop
        self.schema = schema
        self.required = required
        self.kind, self.nullable = _kind_of(schema)
        self.enum: list[object] | None = _enum_of(schema)
        self.item: Flag | None = None
        if self.kind == "array":
            items = schema.get("items")
            self.item = Flag(name, prop, items if isinstance(items, dict) else {}, False)
        description = schema.get("description")
        self.description = description.strip() if isinstance(description, str) else ""

    def __repr__(self) -> str:
        return f"Flag(--{self.name} -> {self.prop!r}, {self.kind})"

    @property
    def metavar(self) -> str:
        """What the help shows after the flag name: ``STRING``, ``fast|slow``, ``JSON``..."""
        target = self.item if self.item is not None else self
        if target.enum is not None:
            return "|".join(_enum_text(v) for v in target.enum)
        if target.kind == "boolean":
            return ""
        return {"object": "JSON-OBJECT", "any": "JSON"}.get(target.kind, target.kind.upper())


def _enum_text(value: object) -> str:
    return value if isinstance(value, str) else dumps(value)


def _enum_of(schema: dict[str, object]) -> list[object] | None:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return [v for v in enum if v is not None] or None
    if "const" in schema:
        return [schema["const"]]
    return None


def _kind_of(schema: dict[str, object]) -> tuple[str, bool]:
    """(kind, nullable) of a resolved schema; unknown shapes are ``any`` (JSON or text)."""
    nullable = bool(schema.get("nullable"))
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else list(declared) if isinstance(declared, list) else []
    if "null" in types:
        nullable = True
        types = [t for t in types if t != "null"]
    if not types:
        enum = _enum_of(schema)
        if enum and all(isinstance(v, str) for v in enum):
            types = ["string"]
        elif enum and all(isinstance(v, int) and not isinstance(v, bool) for v in enum):
            types = ["integer"]
        elif "properties" in schema:
            types = ["object"]
        elif "items" in schema:
            types = ["array"]
    if len(types) != 1 or types[0] not in _KINDS:
        return "any", nullable
    return types[0], nullable


# ----------------------------------------------------------------------------------------- the schema
def _follow_ref(ref: str, root: dict[str, object]) -> dict[str, object] | None:
    if not ref.startswith("#"):
        return None
    node: object = root
    for raw in ref[1:].split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or token not in node:
            return None
        node = node[token]
    return node if isinstance(node, dict) else None


def _resolve(schema: object, root: dict[str, object], depth: int = 0) -> dict[str, object]:
    """Inline ``$ref``, single-element ``allOf`` and the null branch of ``anyOf``/``oneOf`` (sibling keys win,
    as in JSON Schema 2019+)."""
    if not isinstance(schema, dict) or depth > _MAX_REF_DEPTH:
        return {}
    out: dict[str, object] = dict(schema)
    ref = out.pop("$ref", None)
    if isinstance(ref, str):
        target = _follow_ref(ref, root)
        if target is not None:
            out = {**_resolve(target, root, depth + 1), **out}
    all_of = out.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        del out["allOf"]
        out = {**_resolve(all_of[0], root, depth + 1), **out}
    for key in ("anyOf", "oneOf"):
        branches = out.get(key)
        if not isinstance(branches, list):
            continue
        resolved = [_resolve(b, root, depth + 1) for b in branches]
        non_null = [b for b in resolved if b.get("type") != "null"]
        if len(non_null) < len(resolved):
            out["nullable"] = True
        if len(non_null) == 1:
            del out[key]
            out = {**non_null[0], **out}
        else:
            out[key] = non_null
    return out


def tool_flags(input_schema: object) -> list[Flag]:
    """The flags of a tool, in the schema's property order (required ones keep their place)."""
    root = input_schema if isinstance(input_schema, dict) else {}
    resolved = _resolve(root, root)
    properties = resolved.get("properties")
    if not isinstance(properties, dict):
        return []
    required_list = resolved.get("required")
    required = set(required_list) if isinstance(required_list, list) else set()
    props = [p for p in properties if isinstance(p, str)]
    names = command_names(props)
    used: set[str] = set(CONTROL_FLAGS)
    renamed: dict[str, str] = {}
    for command, prop in names.items():
        name = command
        if name in CONTROL_FLAGS:
            name = f"arg-{name}"
            n = 1
            while name in used or name in names:
                n += 1
                name = f"arg-{command}-{n}"
        used.add(name)
        renamed[prop] = name
    return [Flag(renamed[prop], prop, _resolve(properties[prop], root), prop in required) for prop in props]


# -------------------------------------------------------------------------------------------- parsing
def _see(prog: str) -> str:
    return f"see `{prog} --help`"


def _describe(flag: Flag) -> str:
    if flag.kind == "boolean":
        return "true|false"
    if flag.kind == "array":
        assert flag.item is not None
        return f"array of {_describe(flag.item)}"
    if flag.enum is not None:
        return "one of " + ", ".join(_enum_text(v) for v in flag.enum)
    return {"string": "string", "integer": "integer", "number": "number", "object": "JSON object"}.get(
        flag.kind, "JSON value"
    )


def _bad(flag: Flag, value: str, expected: str, prog: str) -> UsageError:
    shown = value if len(value) <= 60 else value[:57] + "..."
    return UsageError(f"--{flag.name} expects {expected}, got {shown!r}; {_see(prog)}")


#: A number's bounds in a schema, as the help and the errors write them.
BOUNDS = (("minimum", ">="), ("maximum", "<="), ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<"))


def _check_number(flag: Flag, number: float, text: str, prog: str) -> None:
    for key, op in BOUNDS:
        limit = flag.schema.get(key)
        if not isinstance(limit, (int, float)) or isinstance(limit, bool):
            continue
        ok = {">=": number >= limit, "<=": number <= limit, ">": number > limit, "<": number < limit}[op]
        if not ok:
            raise _bad(flag, text, f"a number {op} {limit}", prog)


def _check_enum(flag: Flag, value: object, text: str, prog: str) -> None:
    if flag.enum is not None and value not in flag.enum:
        allowed = ", ".join(_enum_text(v) for v in flag.enum)
        raise _bad(flag, text, f"one of: {allowed}", prog)


def _from_text(flag: Flag, text: str, prog: str) -> object:
    """Coerce one command-line word to the flag's type, or raise a UsageError saying what fits."""
    kind = flag.kind
    if flag.nullable and text == "null" and kind != "string":
        return None
    value: object
    if kind == "string":
        value = text
    elif kind == "integer":
        if not _is_int(text.strip()):
            raise _bad(flag, text, "an integer", prog)
        value = int(text)
        _check_number(flag, value, text, prog)
    elif kind == "number":
        stripped = text.strip()
        try:
            value = int(stripped) if _is_int(stripped) else float(stripped)
        except ValueError:
            raise _bad(flag, text, "a number", prog) from None
        if value != value or value in (_INF, -_INF):  # NaN, or +-inf
            raise _bad(flag, text, "a finite number", prog)
        _check_number(flag, value, text, prog)
    elif kind == "boolean":
        lowered = text.strip().lower()
        if lowered in _TRUE:
            value = True
        elif lowered in _FALSE:
            value = False
        else:
            raise _bad(flag, text, "true or false", prog)
    elif kind == "object":
        value = _json_or_none(text)
        if not isinstance(value, dict):
            raise _bad(flag, text, 'a JSON object like \'{"key": "value"}\'', prog)
    else:
        value = _json_or_none(text, fallback=text)
    _check_enum(flag, value, text, prog)
    return value


def _json_or_none(text: str, fallback: object = None) -> object:
    try:
        return loads(text)
    except ValueError:
        return fallback


def _from_json(flag: Flag, value: object, prog: str) -> object:
    """Check (and where harmless, coerce) one item that came inside a JSON array."""
    if isinstance(value, str) and flag.kind != "string":
        return _from_text(flag, value, prog)
    ok = {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
    }.get(flag.kind, True)
    if not ok and not (value is None and flag.nullable):
        raise _bad(flag, dumps(value), _describe(flag), prog)
    _check_enum(flag, value, dumps(value), prog)
    return value


def _array_values(flag: Flag, text: str, prog: str) -> list[object]:
    assert flag.item is not None
    item = flag.item
    if text.lstrip().startswith("["):
        parsed = _json_or_none(text, fallback=_MISSING)
        if isinstance(parsed, list):
            return [_from_json(item, v, prog) for v in parsed]
        if item.kind != "string":
            raise _bad(flag, text, f"a JSON array or one {_describe(item)} per --{flag.name}", prog)
    return [_from_text(item, text, prog)]


def _read_json_input(text: str, prog: str) -> dict[str, object]:
    try:
        value = loads(text)
    except ValueError as exc:
        raise UsageError(
            f'--json is not valid JSON ({exc}); pass one JSON object, e.g. --json \'{{"query": "x"}}\', '
            f"or --json - to read it from stdin; {_see(prog)}"
        ) from None
    if not isinstance(value, dict):
        raise UsageError(
            f"--json must be a JSON object of the tool's arguments, not a {type(value).__name__}; "
            f'e.g. --json \'{{"query": "x"}}\'; {_see(prog)}'
        )
    return value


def did_you_mean(word: str, candidates: list[str]) -> str:
    """``did you mean X? `` for the closest candidate, else ``""``."""
    import difflib  # only on an error path: keep the shim's startup small

    found = difflib.get_close_matches(word, candidates, n=1)
    return f"did you mean {found[0]}? " if found else ""


def _unknown(word: str, flags: list[Flag], prog: str) -> UsageError:
    known = [f"--{f.name}" for f in flags] + ["--json", "--full", "--raw", "--help"]
    return UsageError(f"unknown flag {word}; {did_you_mean(word.split('=', 1)[0], known)}{_see(prog)}")


def parse_call(
    argv: list[str],
    flags: list[Flag],
    *,
    prog: str,
    read_stdin: Callable[[], str] | None = None,
) -> tuple[dict[str, object], bool, bool]:
    """The words after ``SERVER TOOL`` as (the tool arguments, ``--full``, ``--raw``); UsageError on anything
    off (``prog`` as typed). ``-h``/``--help`` anywhere asks for help: the caller checks for it first."""
    by_name = {f.name: f for f in flags}
    values: dict[str, object] = {}
    json_input: dict[str, object] | None = None
    switches: set[str] = set()  # --full, --raw
    i = 0

    def is_flag_word(word: str) -> bool:
        head = word[2:].split("=", 1)[0] if word.startswith("--") else ""
        return head in by_name or head in CONTROL_FLAGS or (head.startswith("no-") and head[3:] in by_name)

    def take_value(word: str, inline: str | None) -> str:
        nonlocal i
        if inline is not None:
            return inline
        if i + 1 >= len(argv) or is_flag_word(argv[i + 1]):
            raise UsageError(f"{word} needs a value; {_see(prog)}")
        i += 1
        return argv[i]

    while i < len(argv):
        word = argv[i]
        if word == "--":
            if i + 1 < len(argv):
                raise UsageError(
                    f"unexpected argument {argv[i + 1]!r} after '--': every input is a flag; {_see(prog)}"
                )
            break
        if not word.startswith("--"):
            if word.startswith("-") and not _is_int(word):
                raise _unknown(word, flags, prog)
            raise UsageError(
                f"unexpected argument {word!r}: every input is a flag, like --name value; {_see(prog)}"
            )
        head, eq, tail = word[2:].partition("=")
        inline = tail if eq else None
        if head == "json":
            if json_input is not None:
                raise UsageError(f"--json given twice; pass one JSON object; {_see(prog)}")
            text = take_value(word, inline)
            if text == "-":
                if read_stdin is None:
                    raise UsageError(f"--json - needs input on stdin, and none is available; {_see(prog)}")
                text = read_stdin()
            json_input = _read_json_input(text, prog)
        elif head in ("full", "raw"):
            if inline is not None:
                raise UsageError(f"--{head} takes no value; {_see(prog)}")
            switches.add(head)
        elif head in by_name:
            flag = by_name[head]
            if flag.kind == "boolean" and flag.enum is None:
                if inline is not None:
                    value: object = _from_text(flag, inline, prog)
                elif i + 1 < len(argv) and argv[i + 1].strip().lower() in ("true", "false"):
                    i += 1
                    value = _from_text(flag, argv[i], prog)
                else:
                    value = True
                _store(values, flag, value, prog)
            elif flag.kind == "array":
                items = _array_values(flag, take_value(word, inline), prog)
                existing = values.setdefault(flag.prop, [])
                assert isinstance(existing, list)
                existing.extend(items)
            else:
                _store(values, flag, _from_text(flag, take_value(word, inline), prog), prog)
        elif head.startswith("no-") and head[3:] in by_name and by_name[head[3:]].kind == "boolean":
            if inline is not None:
                raise UsageError(
                    f"--{head} takes no value; use --{head[3:]} true|false instead; {_see(prog)}"
                )
            _store(values, by_name[head[3:]], False, prog)
        else:
            raise _unknown(word, flags, prog)
        i += 1

    arguments = dict(json_input or {})
    if json_input is not None:
        by_prop = {f.prop: f for f in flags}
        for key, value in json_input.items():
            known = by_prop.get(key)
            if known is not None and known.enum is not None and value is not None:
                _check_enum(known, value, dumps(value), prog)
    arguments.update(values)
    missing = [f for f in flags if f.required and f.prop not in arguments]
    if missing:
        listed = ", ".join(f"--{f.name} ({_describe(f)})" for f in missing)
        raise UsageError(f"missing required {listed}; {_see(prog)}")
    return arguments, "full" in switches, "raw" in switches


def _store(values: dict[str, object], flag: Flag, value: object, prog: str) -> None:
    if flag.prop in values and values[flag.prop] != value:
        raise UsageError(f"--{flag.name} given twice with different values; keep one; {_see(prog)}")
    values[flag.prop] = value
