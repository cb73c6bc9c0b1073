"""Input schemas as flags: every kind of property, its coercion and checks, and the error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpsqueeze._errors import UsageError
from mcpsqueeze.bash._catalog import Catalog
from mcpsqueeze.bash._core import Printout, plan
from mcpsqueeze.bash._flags import parse_call, tool_flags
from rawclient import KITCHEN_SINK_ARGS, KITCHEN_SINK_FLAGS

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PROG = "demo kitchen-sink"


def kitchen_sink_schema() -> dict[str, object]:
    body = json.loads((FIXTURES / "demo_servers.json").read_text())
    tool = next(t for t in body["servers"][0]["tools"] if t["name"] == "kitchen_sink")
    schema: dict[str, object] = tool["inputSchema"]
    return schema


def parse(*argv: str, stdin: str | None = None, schema: object = None) -> dict[str, object]:
    flags = tool_flags(kitchen_sink_schema() if schema is None else schema)
    read = (lambda: stdin) if stdin is not None else None
    return parse_call(list(argv), flags, prog=PROG, read_stdin=read)[0]


def refused(*argv: str, schema: object = None) -> str:
    with pytest.raises(UsageError) as info:
        parse(*argv, schema=schema)
    return str(info.value)


def test_kitchen_sink_properties_become_kebab_flags_in_schema_order() -> None:
    names = [(f.name, f.prop, f.kind, f.required) for f in tool_flags(kitchen_sink_schema())]
    assert names == [
        ("page-id", "page_id", "string", True),
        ("page-size", "pageSize", "integer", False),
        ("ratio", "ratio", "number", False),
        ("verbose", "verbose", "boolean", False),
        ("tags", "tags", "array", False),
        ("filter", "filter", "object", False),
        ("mode", "mode", "string", False),
    ]


def test_every_kind_of_flag_is_coerced_to_its_json_type() -> None:
    assert parse(*KITCHEN_SINK_FLAGS) == KITCHEN_SINK_ARGS


def test_only_given_flags_are_sent_so_the_tool_applies_its_own_defaults() -> None:
    assert parse("--page-id", "p") == {"page_id": "p"}


def test_equals_form_works_for_every_flag() -> None:
    args = parse("--page-id=a=b", "--page-size=3", "--verbose=false", "--tags=x", "--mode=fast")
    assert args == {"page_id": "a=b", "pageSize": 3, "verbose": False, "tags": ["x"], "mode": "fast"}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--verbose"], True),
        (["--no-verbose"], False),
        (["--verbose", "true"], True),
        (["--verbose", "false"], False),
        (["--verbose", "FALSE"], False),
        (["--verbose=yes"], True),
    ],
)
def test_booleans_take_a_bare_flag_a_no_flag_or_an_explicit_value(argv: list[str], expected: bool) -> None:
    assert parse("--page-id", "p", *argv)["verbose"] is expected


def test_arrays_mix_repetition_and_json_arrays_in_order() -> None:
    assert parse("--page-id", "p", "--tags", '["a","b"]', "--tags", "c")["tags"] == ["a", "b", "c"]


def test_array_items_are_coerced_to_the_item_type() -> None:
    schema = {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "integer"}}}}
    assert parse("--ids", "1", "--ids", '[2, "3"]', schema=schema) == {"ids": [1, 2, 3]}
    assert "--ids expects an integer, got 'x'" in refused("--ids", "x", schema=schema)


def test_integers_and_numbers_are_checked_with_a_message_that_names_the_flag() -> None:
    assert refused("--page-id", "p", "--page-size", "ten") == (
        "--page-size expects an integer, got 'ten'; see `demo kitchen-sink --help`"
    )
    assert "--page-size expects an integer, got '1.5'" in refused("--page-id", "p", "--page-size", "1.5")
    assert "--ratio expects a number, got 'half'" in refused("--page-id", "p", "--ratio", "half")
    assert "--ratio expects a finite number" in refused("--page-id", "p", "--ratio", "nan")
    assert parse("--page-id", "p", "--ratio", "-2")["ratio"] == -2


def test_numeric_bounds_from_the_schema_are_enforced() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 10}}}
    assert parse("--n", "10", schema=schema) == {"n": 10}
    assert "--n expects a number >= 1, got '0'" in refused("--n", "0", schema=schema)
    assert "--n expects a number <= 10" in refused("--n", "11", schema=schema)


def test_enums_are_checked_and_the_message_lists_the_allowed_values() -> None:
    assert "--mode expects one of: fast, slow, got 'medium'" in refused("--page-id", "p", "--mode", "medium")


def test_a_missing_required_flag_names_the_flag_its_type_and_where_to_look() -> None:
    assert refused("--mode", "slow") == "missing required --page-id (string); see `demo kitchen-sink --help`"


def test_objects_must_be_json_objects_and_an_optional_one_accepts_null() -> None:
    assert "--filter expects a JSON object" in refused("--page-id", "p", "--filter", "[1]")
    assert parse("--page-id", "p", "--filter", "null")["filter"] is None


def test_json_input_gives_the_whole_object_and_flags_override_its_keys() -> None:
    args = parse("--json", '{"page_id": "j", "mode": "fast", "extra": 1}', "--mode", "slow")
    assert args == {"page_id": "j", "mode": "slow", "extra": 1}


def test_json_dash_reads_the_object_from_stdin() -> None:
    assert parse("--json", "-", stdin='{"page_id": "from-stdin"}') == {"page_id": "from-stdin"}


def test_json_input_must_be_a_json_object_and_still_satisfy_required_and_enums() -> None:
    assert "--json is not valid JSON" in refused("--json", "{nope")
    assert "--json must be a JSON object" in refused("--json", "[1]")
    assert "missing required --page-id" in refused("--json", '{"mode": "fast"}')
    assert "--mode expects one of: fast, slow" in refused("--json", '{"page_id": "p", "mode": "x"}')


def test_unknown_flags_and_positional_words_are_refused_with_a_suggestion() -> None:
    assert refused("--page-id", "p", "--pagesize", "3") == (
        "unknown flag --pagesize; did you mean --page-size? see `demo kitchen-sink --help`"
    )
    assert "unexpected argument 'p'" in refused("p")


def test_a_flag_followed_by_another_flag_instead_of_its_value_is_refused() -> None:
    assert refused("--page-id", "--verbose") == "--page-id needs a value; see `demo kitchen-sink --help`"


def test_a_negative_number_is_a_value_not_a_flag() -> None:
    schema = {"type": "object", "properties": {"offset": {"type": "integer"}}}
    assert parse("--offset", "-5", schema=schema) == {"offset": -5}


def test_help_full_and_raw_are_the_shims_own_switches() -> None:
    flags = tool_flags(kitchen_sink_schema())
    assert parse_call(["--page-id", "p", "--full", "--raw"], flags, prog=PROG) == (
        {"page_id": "p"},
        True,
        True,
    )
    body = json.loads((FIXTURES / "demo_servers.json").read_text())
    helped = plan(["demo", "kitchen-sink", "--bogus", "-h"], Catalog.from_json(body))
    assert (
        isinstance(helped, Printout)
        and helped.code == 0
        and helped.stdout.startswith("Usage: mcpsq demo kitchen-sink")
    )


def test_a_property_named_like_a_control_flag_gets_an_arg_prefix() -> None:
    schema = {"type": "object", "properties": {"raw": {"type": "boolean"}, "json": {"type": "string"}}}
    assert [f.name for f in tool_flags(schema)] == ["arg-raw", "arg-json"]
    assert parse("--arg-raw", "--arg-json", "{}", schema=schema) == {"raw": True, "json": "{}"}


def test_refs_optional_any_of_and_nullable_type_lists_read_as_the_plain_type() -> None:
    schema = {
        "type": "object",
        "$defs": {"Mode": {"enum": ["a", "b"], "type": "string"}},
        "properties": {
            "mode": {"$ref": "#/$defs/Mode", "description": "how"},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "name": {"type": ["string", "null"]},
            "pick": {"allOf": [{"$ref": "#/$defs/Mode"}]},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        },
    }
    flags = {f.name: f for f in tool_flags(schema)}
    assert (flags["mode"].kind, flags["mode"].enum, flags["mode"].description) == (
        "string",
        ["a", "b"],
        "how",
    )
    assert (flags["limit"].kind, flags["limit"].nullable) == ("integer", True)
    assert (flags["name"].kind, flags["name"].nullable) == ("string", True)
    assert flags["pick"].enum == ["a", "b"]
    assert flags["either"].kind == "any"
    assert parse("--limit", "null", "--either", "7", "--mode", "b", schema=schema) == {
        "limit": None,
        "either": 7,
        "mode": "b",
    }


def test_a_schema_without_properties_gives_no_flags() -> None:
    assert tool_flags({"type": "object"}) == []
    assert tool_flags(None) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [("7", 7), ("+7", 7), (" 7 ", 7), ("007", 7), ("²", None), ("1_0", None), ("7.0", None), ("", None)],
)
def test_integers_are_ascii_digits_with_an_optional_sign(text: str, value: int | None) -> None:
    if value is None:
        assert "--page-size expects an integer" in refused("--page-id", "p", "--page-size", text)
    else:
        assert parse("--page-id", "p", "--page-size", text)["pageSize"] == value


@pytest.mark.parametrize("text", ["inf", "-Infinity", "1e999", "nan"])
def test_numbers_must_be_finite(text: str) -> None:
    assert "--ratio expects a finite number" in refused("--page-id", "p", f"--ratio={text}")


def test_a_negative_number_after_a_flag_is_a_value_and_alone_is_an_unexpected_argument() -> None:
    assert parse("--page-id", "p", "--ratio", "-0.5")["ratio"] == -0.5
    assert "unexpected argument '-3'" in refused("--page-id", "p", "-3")
    assert "unknown flag -x" in refused("--page-id", "p", "-x")
