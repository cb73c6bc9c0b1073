"""Previews by characters: a page of HTML as a reader sees it, prose without short lines, one-line text.
Every marker names an exact character range; between markers is the text of exactly those characters."""

from __future__ import annotations

import html
import itertools
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpsqueeze._voice import McpVoice, ShellVoice
from mcpsqueeze.shrink import RecoveryHint, shrink_texts
from mcpsqueeze.shrink._html import looks_like_html

FIXTURES = Path(__file__).parent / "fixtures"
MARKER = re.compile(r"^\[chars (\d+)-(\d+) folded(?:: [^\]]*)?\]$")
HEADER = re.compile(
    r"^\[mcpsqueeze\] .* of (?:\d+ characters|characters \d+-\d+)(?:, [^;]*)?; each \[chars A-B"
)


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _pieces(preview: str) -> list[tuple[int, int] | str]:
    """The preview's body in order: each marker's (start, end), and each run of shown lines."""
    lines = preview.split("\n")
    assert HEADER.match(lines[0]), lines[0]
    out: list[tuple[int, int] | str] = []
    for line in lines[1:]:
        match = MARKER.match(line)
        if match:
            out.append((int(match.group(1)), int(match.group(2))))
        elif line:
            if out and isinstance(out[-1], str):
                out[-1] += "\n" + line
            else:
                out.append(line)
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def _reader_words(raw: str) -> list[str]:
    """The words a reader sees in a slice of HTML: tags left out, entities decoded."""
    return _words(html.unescape(re.sub(r"<[^>]*>", " ", raw)))


def _check_tiling(preview: str, original: str, reader: bool) -> None:
    """Markers are in order and tile the text with the shown runs: the words of each shown run are the
    words of the characters between its neighbouring markers (for HTML, as a reader sees them)."""
    pieces = _pieces(preview)
    ranges = [p for p in pieces if isinstance(p, tuple)]
    assert all(a < b for a, b in ranges)
    assert all(b1 <= a2 for (_, b1), (a2, _) in itertools.pairwise(ranges))
    at = 0
    for k, piece in enumerate(pieces):
        if isinstance(piece, tuple):
            assert piece[0] == at, (piece, at)
            at = piece[1]
            continue
        end = next((p[0] for p in pieces[k + 1 :] if isinstance(p, tuple)), len(original))
        shown = [w for w in _words(piece)]
        expected = _reader_words(original[at:end]) if reader else _words(original[at:end])
        assert shown == expected, (at, end)
        at = end
    assert at == len(original)


def test_an_html_page_is_shown_as_its_text_in_the_golden_preview(hint: RecoveryHint, golden) -> None:  # type: ignore[no-untyped-def]
    page = _fixture("page.html")
    shrunk = shrink_texts([page], 20000, hint, above=6000)
    assert shrunk is not None and shrunk.report.strategy == "text:passages-html"
    (preview,) = shrunk.texts
    assert "<" not in preview.split("\n", 1)[1].replace("<head", "")  # no markup shown
    assert "title: Backups and restores | Ops handbook" in preview
    assert "# Backups and restores" in preview and "## Keys" in preview
    assert "vault-archive-2026" in preview  # the sentence that stands out
    assert "head (1 script, 1 style)" in preview and "header (13 links)" in preview
    assert (
        "[links: 19 in all, 2 distinct in the text: /guides/restore, https://status.example.com/]" in preview
    )
    golden("passages_page_html.txt", preview)


def test_html_markers_tile_the_page_and_the_text_between_them_is_its_reader_text(hint: RecoveryHint) -> None:
    page = _fixture("page.html")
    for budget in (6000, 3000, 1500):
        shrunk = shrink_texts([page], budget, hint)
        assert shrunk is not None
        body = shrunk.texts[0].split("\n", 1)[1]
        kept = "\n".join(
            line for line in body.split("\n") if not line.startswith(("title:", "description:", "[links:"))
        )
        _check_tiling(shrunk.texts[0].split("\n", 1)[0] + "\n" + kept, page, reader=True)


def test_prose_with_one_odd_paragraph_shows_its_sentence_in_the_golden_preview(
    hint: RecoveryHint, golden
) -> None:  # type: ignore[no-untyped-def]
    prose = _fixture("minutes.txt")
    shrunk = shrink_texts([prose], 1500, hint)
    assert shrunk is not None and shrunk.report.strategy == "text:passages-prose"
    (preview,) = shrunk.texts
    assert "tin of peppermints" in preview
    _check_tiling(preview, prose, reader=False)
    golden("passages_minutes_txt.txt", preview)


def test_a_one_line_text_over_shrink_above_gets_a_preview_by_structure(hint: RecoveryHint) -> None:
    sentences = [
        f"Sentence number {i} says the {('red', 'green', 'blue')[i % 3]} lamp is on." for i in range(300)
    ]
    sentences[150] = "The vault combination was changed to 31-07-52 by the night porter."
    text = " ".join(sentences)
    assert 6000 < len(text) < 20000 and "\n" not in text
    shrunk = shrink_texts([text], 20000, hint, above=6000)
    assert shrunk is not None and shrunk.report.strategy == "text:passages-prose"
    assert "31-07-52" in shrunk.texts[0] and len(shrunk.texts[0]) < len(text) // 3
    _check_tiling(shrunk.texts[0], text, reader=False)


def test_a_minified_page_under_the_budget_is_not_passed_whole(hint: RecoveryHint) -> None:
    page = re.sub(r">\s+<", "><", _fixture("page.html"))  # one line
    assert page.count("\n") == 0 or page.count("\n") < 3
    shrunk = shrink_texts([page], 20000, hint, above=6000)
    assert shrunk is not None and shrunk.report.strategy == "text:passages-html"
    assert len(shrunk.texts[0]) < len(page) // 2


def test_the_shell_voice_names_the_window_as_mcpsq_flags() -> None:
    hint = RecoveryHint("c" * 32, None, ShellVoice())
    shrunk = shrink_texts([_fixture("page.html")], 2000, hint)
    assert shrunk is not None
    assert re.search(
        r"Read them: mcpsq recover c{32} --offset \d+ --length \d+$", shrunk.texts[0].split("\n")[0]
    )


def test_a_later_text_block_names_offsets_in_the_joined_text(hint: RecoveryHint) -> None:
    first, page = "x" * 100, _fixture("page.html")
    shrunk = shrink_texts([first, page], 3000, hint)
    assert shrunk is not None
    preview = shrunk.texts[1]
    assert f"characters 101-{101 + len(page)}" in preview.split("\n")[0]
    starts = [int(m.group(1)) for m in re.finditer(r"\[chars (\d+)-", preview)]
    assert starts and starts[0] == 101  # the page's head, offset in the joined text


@pytest.mark.parametrize("size", [1_000_000, 10_000_000])
def test_a_large_page_is_previewed_in_time_linear_in_its_size(hint: RecoveryHint, size: int) -> None:
    one = _fixture("page.html")
    body = one[one.index("<main>") : one.index("</main>")]
    page = one[: one.index("<main>")] + body * (size // len(body)) + one[one.index("</main>") :]
    start = time.perf_counter()
    shrunk = shrink_texts([page], 20000, hint, above=6000)
    elapsed = time.perf_counter() - start
    assert shrunk is not None and shrunk.report.strategy == "text:passages-html"
    assert len(shrunk.texts[0]) <= 20000
    assert elapsed < 4.0 * size / 1_000_000  # (about 0.1 s per MB here; a loose bound for busy machines)


@st.composite
def pages(draw: st.DrawFn) -> str:
    """Pages of random structure: tags (some unclosed, some boilerplate), text, entities, comments."""
    tags = ["p", "div", "span", "a", "li", "ul", "h2", "nav", "footer", "script", "style", "td", "tr", "b"]
    words = st.sampled_from(["alpha", "beta", "Gamma.", "delta!", "&amp;", "x<y", "zeta?", "eta", "Theta."])
    out = ["<!DOCTYPE html><html><head><title>t</title></head><body>"]
    for _ in range(draw(st.integers(5, 60))):
        kind = draw(st.integers(0, 4))
        tag = draw(st.sampled_from(tags))
        if kind == 0:
            out.append(f'<{tag} class="{draw(st.sampled_from(["menu", "post", "x"]))}">')
        elif kind == 1:
            out.append(f"</{tag}>")
        elif kind == 2:
            out.append("<!-- " + draw(words) + " -->")
        else:
            out.append(" ".join(draw(st.lists(words, min_size=1, max_size=12))) + " ")
    out.append("</body></html>")
    return "".join(out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages(), st.sampled_from([1024, 2000, 6000]))
def test_any_page_fits_its_budget_and_its_markers_are_ordered_ranges_of_it(page: str, budget: int) -> None:
    hint = RecoveryHint("a" * 32, None, McpVoice())
    if len(page) <= budget:
        return
    shrunk = shrink_texts([page], budget, hint)
    assert shrunk is not None and len(shrunk.texts[0]) <= budget
    if shrunk.report.strategy != "text:passages-html":
        return
    ranges = [p for p in _pieces(shrunk.texts[0]) if isinstance(p, tuple)]
    assert all(0 <= a < b <= len(page) for a, b in ranges)
    assert all(b1 <= a2 for (_, b1), (a2, _) in itertools.pairwise(ranges))


PIECES = st.sampled_from(
    ["Alpha.", "beta", "Gamma!", "dé", "x", "?", "…", " ", "  ", "\t", "ünï. ", "Z", "4.2 ", "\u2028"]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, min_size=800, max_size=3000).map("".join), st.text(max_size=40))
def test_any_one_line_text_tiles_exactly(body: str, odd: str) -> None:
    text = (body[: len(body) // 2] + odd + body[len(body) // 2 :]).replace("\n", " ").replace("\r", " ")
    if len(text) <= 1500:
        return
    hint = RecoveryHint("b" * 32, None, McpVoice())
    shrunk = shrink_texts([text], 1500, hint)
    assert shrunk is not None and len(shrunk.texts[0]) <= 1500
    if shrunk.report.strategy == "text:passages-prose":
        _check_tiling(shrunk.texts[0], text, reader=False)


def test_html_is_recognised_by_its_markup_only() -> None:
    assert looks_like_html("<!doctype html><html><body><p>x</p></body></html>")
    assert looks_like_html("  <div class='a'>" + "<p>x</p><a href='#'>y</a><li>z</li>" * 5 + "</div>")
    assert not looks_like_html("<?xml version='1.0'?><rss><item><title>x</title></item></rss>")
    assert not looks_like_html("Some text that mentions <p> and <div> tags in passing.")
    assert not looks_like_html("<3 hearts and <p> " * 40)
