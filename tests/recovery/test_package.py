from __future__ import annotations

import ast
import sys
from pathlib import Path

import mcpsqueeze.recovery as recovery

PACKAGE_DIR = Path(recovery.__file__).parent
# Modules the package itself owns; anything else must be stdlib or the shared error tree.
OWN = {p.stem for p in PACKAGE_DIR.glob("_*.py")} | {"__init__"}
ALLOWED = set(sys.stdlib_module_names) | {"__future__", "mcpsqueeze._errors"}
# Files other engineers keep in this directory; the fast path below does not import them.
NOT_ON_THE_SHIM_PATH = {"_store", "_redis"}  # _redis: only with --recovery-url


def test_the_public_api_is_exactly_the_documented_names() -> None:
    assert sorted(recovery.__all__) == sorted(
        [
            "TENANT_RE",
            "CleanReport",
            "FileStore",
            "MemoryCache",
            "RecoveryStore",
            "RedisStore",
            "Space",
            "StoreLayer",
            "check_if_present",
            "clean_directory",
            "ensure_private_dir",
            "is_response_id",
            "make_private",
            "new_response_id",
            "open_recovery_file",
            "parse_duration",
            "parse_size",
            "readable_by_others",
            "resolve_pointer",
            "safe_url",
        ]
    )
    assert all(hasattr(recovery, name) for name in recovery.__all__)


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(path: Path) -> set[str]:
    """Every module a file imports at run time (``if TYPE_CHECKING:`` blocks do not run)."""
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text())]
    while pending:
        node = pending.pop()
        if _is_type_checking_block(node):
            continue
        pending.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
    return found


def test_the_recovery_modules_the_shim_loads_import_only_the_standard_library() -> None:
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        if path.stem in NOT_ON_THE_SHIM_PATH:
            continue
        for name in _imports(path):
            if name == ".._lazy":  # the package face's loader: imports nothing at load time
                continue
            if name.startswith("."):
                assert name[1:] in OWN and name[1:] not in NOT_ON_THE_SHIM_PATH, (path.name, name)
            else:
                assert name in ALLOWED or name.split(".")[0] in sys.stdlib_module_names, (path.name, name)
