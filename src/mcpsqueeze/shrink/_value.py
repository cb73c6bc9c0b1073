"""Preview size by value: how many characters a result's preview is worth, below the budget.

The budget is the hard maximum. A preview need not fill it: once an outline shows a text's
landmarks (definitions, file and hunk headers, commit subjects, headings), more body text mostly
costs the agent tokens it did not ask for, on this turn and every later one, and any folded range is
one exact ``lines`` call away. So a result over the ``shrink_above`` size (docs/previews.md) gets a
target of its landmarks, their markers and a little supporting text, not the budget:

- text in a recognised format: the outline header, every landmark line and inner landmark (the
  nested outline of large blocks, the first sentence under each heading), one fold marker per gap
  (per package of a lock file) and ``SUPPORT_CHARS`` of what explains them (signatures, the head,
  first changed lines);
- JSON: ``JSON_CHARS``, which the condense engine fills with every field name, honest counts and
  the items that fit (a preview that would drop a field name gets more room, up to the budget);
- text of no known format: unchanged while it fits the budget (its head, tail and the lines that
  stand out show little structure, so a cut there would often cost a call for nothing); over the
  budget, those lines and ``SUPPORT_CHARS``;
- text read by characters (``_passages``: a page of HTML, prose without short lines, one line): its
  headings, the sentences that stand out, the lead and ``SUPPORT_CHARS``.

Pure: the engine calls ``block_goal`` on blocks it has already classified and outlined.
"""

from __future__ import annotations

import itertools

from mcpsqueeze.shrink._outline import Outliner
from mcpsqueeze.shrink._unusual import MATCHES

__all__ = ["JSON_CHARS", "MIN_SAVING", "MIN_SAVING_CHARS", "SUPPORT_CHARS", "text_goal"]

#: Characters of supporting text an outline gets beyond its landmarks and markers.
SUPPORT_CHARS = 1000
#: The preview size of a JSON result that fits the budget but is over ``shrink_above``.
JSON_CHARS = 4000
#: A result that fits the budget is shown whole unless its preview saves at least this share ...
MIN_SAVING = 0.25
#: ... and at least this many characters: about 1,000 tokens, what one more turn costs the agent
#: (a generated call, its wrapper, the wait). A preview that saves less than a turn loses as soon as
#: the agent needs anything it folded, which is likely: most of a result is folded.
MIN_SAVING_CHARS = 4000
_HEADER = 260  # the outline's first line, with its example recover call
_MARKER = 26  # "[lines 1234-5678 folded]" and its line end, before a plan's words


def text_goal(outliner: Outliner, length: int, fits: bool = False) -> int | None:
    """The characters an outline of this text is worth, or None when it has no plan, or when it is
    text of no known format, no line matching the call, that ``fits`` the budget: then only the
    budget can make it shrink."""
    if outliner.reading is not None:
        return outliner.reading.goal(SUPPORT_CHARS, _HEADER)
    plan = outliner.plan
    if plan is None or (fits and outliner.format is None and not outliner.matched):
        return None
    lines = outliner.lines
    marks = {*plan.landmarks, *plan.inner}
    if not plan.landmarks:  # (tables, logs, plain lines: the best lines the call's words match)
        marks.update(plan.query[:MATCHES])
    marker = _MARKER + min(48, plan.detail)
    goal = _HEADER + SUPPORT_CHARS + sum(len(lines[i]) + marker for i in marks)
    if plan.breaks:  # a marker per run between breaks (each package of a lock file), and its words
        edges = [0, *plan.breaks, len(lines)]
        goal += sum(_MARKER + 2 + len(plan.describe(a, b)) for a, b in itertools.pairwise(edges))
    return min(goal, length)
