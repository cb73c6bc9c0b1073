"""Preview size by value (``shrink_texts(..., above=N)``): mid-size results get a preview of what
they are worth, never above the budget, with every landmark and field name, and rebuild exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from outlines import rebuild

from mcpsqueeze.shrink import RecoveryHint, landmarks, shrink_texts

ROOT = Path(__file__).resolve().parents[2]
# ~6-8 KB of Python
SOURCE = (ROOT / "src" / "mcpsqueeze" / "settings" / "_policy.py").read_text(encoding="utf-8")


def _shown(result: object) -> str:
    assert result is not None
    texts = result.texts  # type: ignore[attr-defined]
    return "".join(texts) + (result.notice or "")  # type: ignore[attr-defined]


def test_a_mid_size_source_file_under_the_budget_becomes_an_outline_with_every_definition(
    hint: RecoveryHint,
) -> None:
    source = SOURCE + SOURCE.replace("def ", "def again_")  # 12-16 KB, well under the 20,000 budget
    assert 6000 < len(source) < 20000
    assert shrink_texts([source], 20000, hint) is None  # without `above`: shown whole, as before
    result = shrink_texts([source], 20000, hint, above=6000)
    preview = _shown(result)
    assert len(preview) <= len(source) * 0.75
    shown = set(preview.split("\n"))
    assert all(mark in shown for mark in landmarks(source))
    assert rebuild(preview, source) == source  # every cut is an exact lines range


def test_a_result_at_or_under_the_threshold_passes_whole(hint: RecoveryHint) -> None:
    small = SOURCE[:5000]
    assert shrink_texts([small], 20000, hint, above=6000) is None
    assert shrink_texts([small], 20000, hint, above=len(small)) is None


def test_prose_of_no_format_under_the_budget_passes_whole(hint: RecoveryHint) -> None:
    words = (ROOT / "docs" / "previews.md").read_text(encoding="utf-8").split()
    words = [w for w in words if not w.startswith("#")]  # no heading marks wherever the words wrap
    prose = "\n".join(" ".join(words[i : i + 12]) for i in range(0, 12 * 120, 12))  # lines of prose
    assert 6000 < len(prose) < 20000
    assert shrink_texts([prose], 20000, hint, above=6000) is None


def test_a_mid_size_json_result_keeps_every_field_name_in_about_4000_characters(hint: RecoveryHint) -> None:
    rows = [{"id": i, "name": f"row {i}", "note": "n" * 40, f"only_in_{i % 7}": True} for i in range(150)]
    text = json.dumps(rows)
    assert 6000 < len(text) < 20000
    preview = _shown(shrink_texts([text], 20000, hint, above=6000))
    assert len(preview) <= 4000
    names = {key for row in rows for key in row}
    assert all(json.dumps(name) in preview for name in names)


def test_a_result_over_the_budget_gets_the_value_size_not_the_budget(hint: RecoveryHint) -> None:
    source = "\n".join(SOURCE for _ in range(5))  # over the budget, few distinct landmarks
    by_budget = _shown(shrink_texts([source], 20000, hint))
    by_value = _shown(shrink_texts([source], 20000, hint, above=6000))
    assert len(by_value) < len(by_budget) <= 20000
    shown = set(by_value.split("\n"))
    assert all(mark in shown for mark in landmarks(source))
    assert rebuild(by_value, source) == source


def test_a_preview_that_would_save_less_than_a_turn_is_not_made(
    hint: RecoveryHint, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under the budget, a preview must save a quarter AND MIN_SAVING_CHARS (about 1,000 tokens, one
    more turn): one that saves less loses as soon as the agent needs anything it folded."""
    import mcpsqueeze.shrink._engine as engine
    from mcpsqueeze.shrink._value import MIN_SAVING_CHARS

    source = "".join(  # 21 handlers with 3-line bodies: 7,656 characters, an outline of 3,857
        f"def handler_{i:03d}(request: Request, session: Session, options: Options | None = None) -> Response:\n"
        + "".join(
            f"    value_{k} = compute(request, session, options, index={i}, step={k})\n" for k in range(3)
        )
        + "    return Response(value)\n\n"
        for i in range(21)
    )
    assert 6000 < len(source) < 6000 + 2 * MIN_SAVING_CHARS
    monkeypatch.setattr(engine, "MIN_SAVING_CHARS", 0)
    cheaper = shrink_texts([source], 20000, hint, above=6000)  # a quarter only: a preview is made
    assert cheaper is not None and len(source) - len(_shown(cheaper)) < MIN_SAVING_CHARS
    monkeypatch.setattr(engine, "MIN_SAVING_CHARS", MIN_SAVING_CHARS)
    assert shrink_texts([source], 20000, hint, above=6000) is None  # shown whole
    assert shrink_texts([source], 5000, hint, above=6000) is not None  # over the budget: always cut
