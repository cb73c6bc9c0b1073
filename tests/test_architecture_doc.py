"""docs/architecture.md names every module under src/mcpsqueeze/, so the tree cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_has_exactly_one_line_in_the_architecture_tree() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    tree = doc.split("## Tree", 1)[1]
    listed: list[str] = []
    package = ""
    for line in tree.splitlines():
        match = re.match(r"^([│ ]*)[├└]── (\S+)", line)
        if not match:
            continue
        name = match.group(2)
        if name.endswith("/"):
            package = name
        else:
            listed.append((package if match.group(1) else "") + name)
    src = ROOT / "src" / "mcpsqueeze"
    actual = sorted(str(p.relative_to(src)) for p in src.rglob("*.py") if "__pycache__" not in p.parts)
    assert sorted(listed) == actual
