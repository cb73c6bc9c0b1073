"""serve's session API (and a Client's, the same app) refuses a call body it cannot take with a 400 that
says why, as wrap and the shim refuse it: nesting deeper than the proxy parses, numbers JSON cannot carry
(NaN, Infinity, 1e999), and arguments that are not an object. Nothing reaches the backend."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from serve.serve_api import api, serve_in_process, write_token


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    tmp = tmp_path_factory.mktemp("api")
    token = write_token(tmp / "token")
    with serve_in_process(
        "--recovery-dir", str(tmp / "rec"), "--listen", "127.0.0.1:0", "--token-file", str(tmp / "token"),
        "-n", "demo", "--", sys.executable, "-m", "mcpsqueeze.demo.server",
    ) as url:  # fmt: skip
        yield url, token


def _post(door: tuple[str, str], body: bytes) -> tuple[int, dict[str, object]]:
    return api(*door, "/v1/call", body)  # type: ignore[no-any-return]


def _echo(arguments: str) -> bytes:
    return ('{"server": "demo", "tool": "echo", "arguments": ' + arguments + "}").encode()


def test_a_call_body_nested_deeper_than_the_proxy_parses_is_a_400_that_says_so(door: tuple[str, str]) -> None:
    status, body = _post(door, _echo('{"text": "x", "deep": ' + "[" * 5000 + "]" * 5000 + "}"))
    assert status == 400, body
    assert "nested deeper" in json.dumps(body)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_a_number_json_cannot_carry_in_the_arguments_is_a_400(door: tuple[str, str], number: str) -> None:
    status, body = _post(door, _echo('{"text": ' + number + "}"))
    assert status == 400, body
    assert body["error"]["code"] == "bad_request"  # type: ignore[index]


@pytest.mark.parametrize("arguments", ["[]", '"text"', "3", "true"])
def test_arguments_that_are_not_an_object_are_a_400(door: tuple[str, str], arguments: str) -> None:
    status, body = _post(door, _echo(arguments))
    assert status == 400, body
    assert "arguments must be a JSON object" in json.dumps(body)


@pytest.mark.parametrize("arguments", ["{}", "null"])
def test_no_arguments_are_an_empty_object(door: tuple[str, str], arguments: str) -> None:
    status, body = _post(door, b'{"server": "demo", "tool": "add", "arguments": ' + arguments.encode() + b"}")
    assert status == 200, body  # the tool itself says what is missing
