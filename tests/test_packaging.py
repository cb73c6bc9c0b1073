"""pyproject.toml: the license as an SPDX string, with a setuptools that reads it (PEP 639)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_the_license_is_an_spdx_string_and_setuptools_is_new_enough_to_read_it() -> None:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    assert data["project"]["license"] == "MIT"
    assert not any(c.startswith("License ::") for c in data["project"].get("classifiers", []))
    [setuptools] = [r for r in data["build-system"]["requires"] if r.startswith("setuptools")]
    found = re.search(r">=\s*(\d+)", setuptools)
    assert found is not None and int(found.group(1)) >= 77, setuptools
