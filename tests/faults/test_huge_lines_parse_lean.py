"""Issue 23 item 12: a huge JSON-RPC line is parsed holding the line and its text, not three copies
(orjson copies its input first), and the result is exactly what the ordinary parse gives."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcpsqueeze._jsonbytes import loads

MB = 1 << 20


def _line(text: str, **extra: object) -> bytes:
    result = {"content": [{"type": "text", "text": text}], **extra}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()


@pytest.mark.parametrize(
    "line",
    [
        _line("a" * (9 * MB), structuredContent={"rows": [1, "two", None, {"x": "y"}]}),
        _line("é中" * (3 * MB)),
        _line("b" * (9 * MB)).replace(b'"result"', b'"' + b"k" * (2 * MB) + b'": 1, "result"'),  # a big key
        _line('quoted " and \\ escaped ' * 400_000),
    ],
)
def test_23_12_a_huge_line_parses_exactly_as_the_ordinary_parse(line: bytes) -> None:
    assert loads(bytearray(line)) == json.loads(line)


def test_23_12_a_control_character_in_a_huge_string_is_refused_as_json_requires() -> None:
    line = _line("a" * (9 * MB)).replace(b"aaaa", b"a\x01aa", 1)
    with pytest.raises(ValueError):
        loads(line)


def test_23_12_parsing_a_100_mb_line_holds_the_line_and_its_text_only() -> None:
    script = (
        "import resource, sys; from mcpsqueeze._jsonbytes import loads\n"
        'line = bytearray(b\'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\')\n'
        "piece = b'a' * (1 << 20)\n"
        "for _ in range(100): line += piece\n"
        "line += b'\"}]}}'\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "value = loads(line)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    grown_kib = int(subprocess.run([sys.executable, "-c", script], capture_output=True, check=True).stdout)
    assert grown_kib * 1024 <= 130 * MB, f"the parse added {grown_kib // 1024} MiB to a 100 MiB line"
