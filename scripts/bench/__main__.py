"""``python -m scripts.bench BENCHMARK [--tree SPEC ...] [--out FILE] [options]``: run one benchmark and
print its report as JSON (the package's docstring lists them)."""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
from pathlib import Path

from . import BENCHMARKS, GUIDE
from ._harness import ROOT, Report, Tree

sys.path.insert(0, str(ROOT / "src"))  # this checkout's counter and engine, not an installed one


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.bench",
        description=GUIDE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="benchmark", required=True)
    for name, summary in BENCHMARKS.items():
        command = commands.add_parser(name, help=summary, description=summary)
        command.add_argument(
            "--tree",
            action="append",
            metavar="SPEC",
            help="an mcpsqueeze to measure: '.' (this checkout, the default), a directory or a git "
            "revision; repeat to compare trees side by side",
        )
        command.add_argument("--out", type=Path, help="also write the report to this file")
        importlib.import_module(f"scripts.bench.{name}").add_arguments(command)
    args = parser.parse_args(argv)
    report = Report(args.benchmark, argv)
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-{args.benchmark}-"))
    try:
        trees = [Tree.of(spec, workdir) for spec in args.tree or ["."]]
        figures = importlib.import_module(f"scripts.bench.{args.benchmark}").run(args, trees, workdir)
        report.finish(figures, args.out)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


main(sys.argv[1:])
