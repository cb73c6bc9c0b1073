"""Draw the import graph of src/mcpsqueeze and print its figures: circles, imports running back up, floors.

    python scripts/import_graph.py [--src DIR] [--dot FILE] [--verbose]

A *room* is a top-level module (`mcpsqueeze/x.py`) or a top-level package (`mcpsqueeze/p/`); a
*floor* is one step of the longest chain of imports between rooms (a room that imports no other room
is on floor 1). Imports count wherever they are written: at module level, inside a function, and
under `if TYPE_CHECKING:` (a type a module names is a dependency of its reader too);
`--runtime` leaves the last out.

- circles: strongly connected groups of modules (files), inside a package or across rooms;
- imports running back up: a module that imports the package's public face (`mcpsqueeze/__init__`,
  e.g. `from .. import __version__`), or a private module (`_name.py`) of another room;
- floors: the longest chain between rooms (a room's modules importing each other do not count).

Exit status 0; the figures are for reading (docs/architecture.md quotes them), not a gate.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = "mcpsqueeze"


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path, name: str, is_package: bool, known: set[str], runtime: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()

    def resolve(module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        base = package.split(".")
        if level > 1:
            base = base[: len(base) - (level - 1)]
        return ".".join([*base, module] if module else base)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if runtime and isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == ROOT:
                        found.add(_known_prefix(alias.name, known))
            elif isinstance(child, ast.ImportFrom):
                target = resolve(child.module, child.level)
                if target.split(".")[0] != ROOT:
                    continue
                for alias in child.names:
                    full = f"{target}.{alias.name}"
                    found.add(full if full in known else _known_prefix(target, known))
            visit(child)

    visit(tree)
    found.discard(name)
    return found


def _known_prefix(name: str, known: set[str]) -> str:
    while name not in known and "." in name:
        name = name.rpartition(".")[0]
    return name


def room_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def connect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return groups


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    parser.add_argument("--dot", type=Path, help="also write the room graph as Graphviz")
    parser.add_argument("--verbose", action="store_true", help="list every finding")
    parser.add_argument("--runtime", action="store_true", help="leave out imports under TYPE_CHECKING")
    args = parser.parse_args()
    src: Path = args.src
    files = sorted((src / ROOT).rglob("*.py"))
    names = {module_name(f, src): f for f in files}
    known = set(names)
    graph = {n: imports_of(f, n, f.name == "__init__.py", known, args.runtime) for n, f in names.items()}

    circles = strongly_connected(graph)
    back_up: list[tuple[str, str]] = []
    for source, targets in graph.items():
        for target in targets:
            if (target == ROOT and source != ROOT and not source.startswith(f"{ROOT}.__main__")) or (
                target.rpartition(".")[2].startswith("_")
                and room_of(target) != room_of(source)
                and target.count(".") >= 2  # a private module inside another room's package
            ):
                back_up.append((source, target))

    rooms: dict[str, set[str]] = defaultdict(set)
    for source, targets in graph.items():
        if source == ROOT:
            continue
        rooms[room_of(source)]
        for target in targets:
            if target != ROOT and room_of(target) != room_of(source):
                rooms[room_of(source)].add(room_of(target))
    room_circles = strongly_connected(rooms)
    floor: dict[str, int] = {}
    chain: dict[str, list[str]] = {}

    def height(room: str, path: tuple[str, ...] = ()) -> int:
        if room in floor:
            return floor[room]
        if room in path:  # a circle between rooms: stop counting here
            return 0
        best, below = 0, []
        for other in rooms.get(room, ()):
            h = height(other, (*path, room))
            if h > best:
                best, below = h, chain.get(other, [other])
        floor[room] = best + 1
        chain[room] = [room, *below]
        return floor[room]

    for room in rooms:
        height(room)
    top = max(floor, key=lambda r: floor[r])
    print(f"rooms: {len(rooms)}  modules: {len(names)}")
    longest = " -> ".join(r.removeprefix(ROOT + ".") for r in chain[top])
    print(f"floors: {floor[top]}  (longest chain: {longest})")
    print(f"circles between modules: {len(circles)}")
    for group in circles:
        print("  " + " <-> ".join(m.removeprefix(ROOT + ".") for m in group))
    print(f"circles between rooms: {len(room_circles)}")
    for group in room_circles:
        print("  " + " <-> ".join(m.removeprefix(ROOT + ".") for m in group))
    print(f"imports running back up: {len(back_up)}")
    for source, target in sorted(back_up) if args.verbose or len(back_up) <= 20 else sorted(back_up)[:20]:
        print(f"  {source.removeprefix(ROOT + '.')} -> {target}")
    if args.verbose:
        for room in sorted(rooms, key=lambda r: (floor[r], r)):
            print(f"  floor {floor[room]:2}: {room}")
    if args.dot:
        lines = ["digraph rooms {", "  rankdir=BT;"]
        for room, targets in sorted(rooms.items()):
            for target in sorted(targets):
                lines.append(f'  "{room.removeprefix(ROOT + ".")}" -> "{target.removeprefix(ROOT + ".")}";')
        lines.append("}")
        args.dot.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
