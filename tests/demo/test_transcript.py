"""The transcript of what a model read, as the demo prints it and the README shows it."""

from __future__ import annotations

from mcpsqueeze.demo._transcript import Step, render_steps


def test_each_call_is_written_as_the_model_makes_it_then_what_it_read_line_for_line() -> None:
    text = render_steps([Step("read_file", {"path": "a.md", "n": 2}, "3 lines", "one\ntwo\nthree\n", 5)])
    assert text == '→ read_file {"path":"a.md","n":2}\n← 3 lines:\none\ntwo\nthree'


def test_a_long_answer_is_cut_after_its_lines_with_a_count_of_the_rest() -> None:
    steps = [
        Step("git_diff", {}, "big", "\n".join(f"line {n}" for n in range(1, 11)), 3),
        Step("squeeze_recover", {"lines": "2-3"}, "2 lines", "b\nc", 1),
    ]
    assert render_steps(steps).splitlines() == [
        "→ git_diff {}", "← big:", "line 1", "line 2", "line 3", "⋮ 7 more lines",
        '→ squeeze_recover {"lines":"2-3"}', "← 2 lines:", "b", "⋮ 1 more line",
    ]  # fmt: skip
