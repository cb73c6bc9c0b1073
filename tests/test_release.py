"""What a release needs before the upload: complete metadata, one version everywhere, a workflow that
builds, checks and publishes on a tag. (.ci/run builds both distributions, runs `twine check --strict`
and installs the wheel with pipx in a fresh venv; the image's label is checked in tests/container.)"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import mcpsqueeze

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
VERSION = mcpsqueeze.__version__


def _commands(path: Path) -> str:
    """The lines of a script that run something (not its comments or what it echoes)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(x for x in lines if not x.lstrip().startswith(("#", "echo ", "name: ")))


def test_the_metadata_an_index_shows_is_complete() -> None:
    for key in ("description", "readme", "license", "license-files", "requires-python", "keywords",
                "classifiers", "urls", "authors", "optional-dependencies"):  # fmt: skip
        assert PROJECT.get(key), key
    assert PROJECT["readme"] == "README.md" and PROJECT["requires-python"] == ">=3.11"
    assert set(PROJECT["urls"]) >= {"Homepage", "Repository", "Issues", "Changelog", "Documentation"}
    assert set(PROJECT["optional-dependencies"]) >= {"just-bash", "redis", "test", "release"}
    assert "Programming Language :: Python :: 3.11" in PROJECT["classifiers"]


def test_the_license_file_is_the_mit_license_the_metadata_names() -> None:
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_the_changelog_has_a_section_for_this_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(VERSION)}\] - \d{{4}}-\d\d-\d\d$", changelog, re.MULTILINE)


def test_the_image_label_is_the_package_version() -> None:
    containerfile = (ROOT / "Containerfile").read_text(encoding="utf-8")
    assert f"\nARG VERSION={VERSION}\n" in containerfile
    assert 'org.opencontainers.image.version="${VERSION}"' in containerfile
    # the build stage installs exactly that version and checks what it prints
    assert '"mcpsqueeze==${VERSION}"' in containerfile
    assert '= "mcpsqueeze, version ${VERSION}"' in containerfile


def test_the_release_workflow_builds_checks_and_publishes_on_a_version_tag() -> None:
    workflow = _commands(ROOT / ".github" / "workflows" / "release.yml")
    assert 'tags: ["v*"]' in workflow
    steps = ["python -m build", "twine check --strict", "pipx install", "--version",
             "pypa/gh-action-pypi-publish"]  # fmt: skip
    positions = [workflow.index(step) for step in steps]
    assert positions == sorted(positions)
    assert "id-token: write" in workflow  # trusted publishing: no stored token


def test_ci_builds_checks_and_installs_the_wheel_before_the_tests() -> None:
    ci = _commands(ROOT / ".ci" / "run")
    steps = ["-m build", "twine check --strict", 'pipx" install', "--version", "bash scripts/test.sh"]
    positions = [ci.index(step) for step in steps]
    assert positions == sorted(positions)


def _declared() -> set[str]:
    """The distributions the metadata names: the dependencies and every extra's."""
    lines = PROJECT["dependencies"] + [
        x for extra in PROJECT["optional-dependencies"].values() for x in extra
    ]
    return {re.split(r"[^A-Za-z0-9_.-]", x, maxsplit=1)[0].lower().replace("_", "-") for x in lines}


def test_every_package_the_source_imports_is_declared() -> None:
    imported = set()
    for path in (ROOT / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"mcpsqueeze"}
    providers = importlib.metadata.packages_distributions()
    undeclared = {
        name
        for name in third_party
        if not {d.lower().replace("_", "-") for d in providers.get(name, [])} & _declared()
    }
    assert not undeclared, f"imported by src/ but not declared in pyproject.toml: {sorted(undeclared)}"
