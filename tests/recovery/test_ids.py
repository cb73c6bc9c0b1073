from __future__ import annotations

from mcpsqueeze.recovery import is_response_id, new_response_id


def test_a_new_response_id_is_32_lowercase_hex_characters() -> None:
    rid = new_response_id()
    assert len(rid) == 32
    assert is_response_id(rid)
    assert rid == rid.lower()


def test_response_ids_do_not_repeat() -> None:
    assert len({new_response_id() for _ in range(1000)}) == 1000


def test_the_id_pattern_rejects_near_misses_including_a_trailing_newline() -> None:
    rid = new_response_id()
    for bad in [rid + "\n", rid.upper(), rid[:-1], rid + "0", "g" * 32, "", f" {rid}"]:
        assert not is_response_id(bad), bad
