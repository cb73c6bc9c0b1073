"""Hostile recover arguments, shared by every door's test.

Each case is (name, the arguments beside response_id, a fragment the error must contain: the bound it
names). They are what a model may send to `squeeze_recover`; every door must refuse each with a usage
error naming the bound, and stay alive for the next call.
"""

from __future__ import annotations

from typing import Any

DIGITS = "1" * 4301  # past Python's int digit limit (ValueError from int())
EXPONENTIAL = "[@,@]" + "|[@,@]" * 14  # doubles the result 15 times: 2.5 GB of JSON text
FLATTENING = "[@,@][]" + "|[@,@][]" * 40  # doubles a flattened list 41 times while evaluating

HOSTILE: list[tuple[str, dict[str, Any], str]] = [
    ("lines-4301-digits", {"lines": DIGITS}, "1000 characters"),
    ("lines-19-digits", {"lines": "1-" + "9" * 19}, "18 digits"),
    ("pointer-index-4301-digits", {"pointer": "/items/" + DIGITS}, "4096 characters"),
    ("pointer-index-19-digits", {"pointer": "/items/" + "9" * 19}, "18 digits"),
    ("pointer-too-long", {"pointer": "/a" * 5000}, "characters"),
    ("query-1500-parentheses", {"query": "(" * 1500 + "items" + ")" * 1500}, "2000 characters"),
    ("query-900-parentheses", {"query": "(" * 900 + "items" + ")" * 900}, "nested"),
    ("query-600-projections", {"query": "items" + "[*]" * 600}, "nested"),
    ("query-1500-nots", {"query": "!" * 1500 + "items"}, "nested"),
    ("query-deep-literal", {"query": "`" + "[" * 900 + "]" * 900 + "`"}, "nested"),
    ("query-too-long", {"query": "items" + ".a" * 2000}, "2000 characters"),
    ("query-exponential", {"query": EXPONENTIAL}, "larger than"),
    ("query-flattening", {"query": FLATTENING}, "work"),
    ("offset-huge", {"offset": 10**30}, "offset"),
    ("offset-bool", {"offset": True}, "offset"),
    ("length-negative", {"length": -1}, "length"),
    ("offset-float", {"offset": 1.5}, "offset"),
    # grep runs on RE2; what it cannot run, or what is too big, is refused up front
    ("grep-backreference", {"grep": "(a)\\1"}, "backreference"),
    ("grep-lookaround", {"grep": "a(?=b)"}, "lookaround"),
    ("grep-too-long", {"grep": "a" * 2000}, "1,000 characters"),
    ("grep-huge-repetition", {"grep": "((a{100}){100}){100}"}, "RE2"),
    ("grep-context-99", {"grep": "a", "context": 99}, "at most 20"),
    ("grep-with-lines", {"grep": "a", "lines": "1-2"}, "does not combine"),
    ("search-blank", {"search": "   "}, "words"),
]

#: A JSON original of a few KB: big enough that the exponential query's JSON would take gigabytes.
ORIGINAL_DOC = {"items": [{"n": i, "word": "squeeze " * 8} for i in range(300)]}
