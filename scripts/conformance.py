#!/usr/bin/env python3
"""Run `@modelcontextprotocol/conformance server --url URL` and report pass/fail per scenario.

    python scripts/conformance.py http://127.0.0.1:PORT/mcp [--json] [--suite active|all|pending]
                                  [--scenario NAME ...] [--timeout SECONDS]

The Node >= 22 binary and the conformance entry point come from `.cache/node/paths.env` (written by
scripts/install-test-deps.sh), overridable with $NODE22 / $CONFORMANCE_JS or --node / --conformance-js.

Exit code: 0 if every scenario passed ("warning" counts as passed), 1 if any failed, 2 on usage or
setup errors (missing Node, unreachable tool, timeout).

Self-contained and stdlib-only: tests load it by path with importlib and call `run_conformance()`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
PATHS_ENV = REPO_ROOT / ".cache" / "node" / "paths.env"

PASSED, WARNING, FAILED, ERROR = "passed", "warning", "failed", "error"

# "=== SUMMARY ===" lines: "✓ tools-list: 1 passed, 0 failed" / "✗ json-schema-2020-12: 0 passed, 1 failed"
_SUMMARY_LINE = re.compile(r"^\s*([\u2713\u2717])\s+(\S+):\s+(\d+) passed, (\d+) failed", re.MULTILINE)
# Result directories: server-<scenario>-<ISO timestamp with ':' and '.' replaced by '-'>Z
_RESULT_DIR = re.compile(r"^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class ConformanceError(RuntimeError):
    """The conformance tool could not be run, timed out, or produced no parseable result."""


def load_paths(paths_env: Path = PATHS_ENV) -> dict[str, str]:
    """KEY=VALUE lines of .cache/node/paths.env, then overridden by the same names in the environment."""
    out: dict[str, str] = {}
    if paths_env.is_file():
        for line in paths_env.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, _, value = line.partition("=")
                out[key.strip()] = value.strip()
    for key in (
        "NODE22",
        "CONFORMANCE_JS",
        "CONFORMANCE_NEXT_JS",
        "EVERYTHING_JS",
        "FILESYSTEM_JS",
        "MEMORY_JS",
    ):
        if os.environ.get(key):
            out[key] = os.environ[key]
    return out


def _classify(checks: list[dict[str, Any]]) -> str:
    statuses = {c.get("status") for c in checks}
    if "FAILURE" in statuses:
        return FAILED
    if "WARNING" in statuses:
        return WARNING
    return PASSED


def run_conformance_detailed(
    url: str,
    node: str,
    conformance_js: str,
    timeout: float = 120.0,
    *,
    suite: str = "active",
    scenarios: list[str] | None = None,
    spec_version: str | None = None,
) -> dict[str, Any]:
    """Run the conformance CLI against `url`.

    Returns {"scenarios": {name: status}, "checks": {name: [check dicts]}, "exit_code": int,
    "seconds": float, "stdout": str, "stderr": str}. status is one of
    "passed" (no FAILURE/WARNING check), "warning" (WARNINGs only; the CLI counts it as passed),
    "failed" (a FAILURE check), "error" (the scenario threw before writing checks.json).
    Raises ConformanceError on timeout or when nothing could be parsed.
    """
    if not (node and Path(node).is_file()):
        raise ConformanceError(f"Node >= 22 binary not found: {node!r} (run scripts/install-test-deps.sh)")
    if not (conformance_js and Path(conformance_js).is_file()):
        raise ConformanceError(f"conformance entry point not found: {conformance_js!r}")

    with tempfile.TemporaryDirectory(prefix="mcp-conformance-") as out_dir:
        runs: list[list[str]] = []
        base = [node, conformance_js, "server", "--url", url, "-o", out_dir]
        if scenarios:
            runs = [[*base, "--scenario", name] for name in scenarios]
        else:
            cmd = [*base, "--suite", suite]
            if spec_version:
                cmd += ["--spec-version", spec_version]
            runs = [cmd]

        env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0")
        stdout_parts: list[str] = []
        stderr_parts: list[str] = []
        exit_code = 0
        start = time.monotonic()
        for cmd in runs:
            remaining = timeout - (time.monotonic() - start)
            if remaining <= 0:
                raise ConformanceError(f"conformance timed out after {timeout}s")
            try:
                proc = subprocess.run(
                    cmd, capture_output=True, text=True, timeout=remaining, env=env, stdin=subprocess.DEVNULL
                )
            except subprocess.TimeoutExpired as exc:
                raise ConformanceError(f"conformance timed out after {timeout}s: {' '.join(cmd)}") from exc
            stdout_parts.append(proc.stdout)
            stderr_parts.append(proc.stderr)
            exit_code = max(exit_code, proc.returncode)
        seconds = time.monotonic() - start
        stdout = _ANSI.sub("", "".join(stdout_parts))
        stderr = _ANSI.sub("", "".join(stderr_parts))

        # Primary source: one checks.json per scenario that ran to completion.
        checks: dict[str, list[dict[str, Any]]] = {}
        for entry in sorted(Path(out_dir).iterdir()):
            m = _RESULT_DIR.match(entry.name)
            checks_file = entry / "checks.json"
            if m and checks_file.is_file():
                try:
                    checks[m.group(1)] = json.loads(checks_file.read_text())
                except ValueError:
                    checks[m.group(1)] = [{"status": "FAILURE", "description": "unreadable checks.json"}]

    results: dict[str, str] = {name: _classify(c) for name, c in checks.items()}
    # Secondary source: the suite summary also names scenarios that threw (no checks.json written).
    for mark, name, _passed, failed in _SUMMARY_LINE.findall(stdout):
        if name not in results:
            results[name] = ERROR if (mark == "\u2717" or int(failed)) else PASSED
    if scenarios:
        for name in scenarios:
            results.setdefault(name, ERROR)
    if not results:
        raise ConformanceError(
            f"no scenario results (exit {exit_code}); stderr: {stderr.strip()[-2000:]!r}; "
            f"stdout: {stdout.strip()[-2000:]!r}"
        )
    return {
        "scenarios": dict(sorted(results.items())),
        "checks": checks,
        "exit_code": exit_code,
        "seconds": round(seconds, 3),
        "stdout": stdout,
        "stderr": stderr,
    }


def run_conformance(url: str, node: str, conformance_js: str, timeout: float = 120.0) -> dict[str, str]:
    """Scenario name -> "passed" | "warning" | "failed" | "error" for the default (active) server suite."""
    scenarios: dict[str, str] = run_conformance_detailed(url, node, conformance_js, timeout)["scenarios"]
    return scenarios


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run MCP server conformance scenarios against a URL.")
    ap.add_argument("url", help="streamable-HTTP endpoint, e.g. http://127.0.0.1:8000/mcp")
    ap.add_argument("--json", action="store_true", help="print {scenario: status, ...} plus totals as JSON")
    ap.add_argument("--suite", default="active", choices=["active", "all", "pending"])
    ap.add_argument("--scenario", action="append", help="run only this scenario (repeatable)")
    ap.add_argument(
        "--spec-version", help="e.g. 2025-11-25, or 2026-07-28 (needs --conformance-js $CONFORMANCE_NEXT_JS)"
    )
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds for the whole run")
    ap.add_argument("--node", help="Node >= 22 binary (default: NODE22 from .cache/node/paths.env)")
    ap.add_argument("--conformance-js", help="conformance dist/index.js (default: CONFORMANCE_JS)")
    ap.add_argument("--verbose", action="store_true", help="also print the CLI's own output")
    args = ap.parse_args(argv)

    paths = load_paths()
    node = args.node or paths.get("NODE22", "")
    cjs = args.conformance_js or paths.get("CONFORMANCE_JS", "")
    if not args.conformance_js and args.spec_version == "2026-07-28" and paths.get("CONFORMANCE_NEXT_JS"):
        cjs = paths["CONFORMANCE_NEXT_JS"]  # only the 0.2 line has the 2026-07-28 scenarios
    try:
        res = run_conformance_detailed(
            args.url,
            node,
            cjs,
            args.timeout,
            suite=args.suite,
            scenarios=args.scenario,
            spec_version=args.spec_version,
        )
    except ConformanceError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2

    scenarios = res["scenarios"]
    failed = sorted(n for n, s in scenarios.items() if s in (FAILED, ERROR))
    if args.verbose:
        sys.stderr.write(res["stdout"] + res["stderr"])
    if args.json:
        print(
            json.dumps(
                {
                    "url": args.url,
                    "scenarios": scenarios,
                    "failed": failed,
                    "passed": sum(s in (PASSED, WARNING) for s in scenarios.values()),
                    "total": len(scenarios),
                    "cli_exit_code": res["exit_code"],
                    "seconds": res["seconds"],
                },
                indent=2,
            )
        )
    else:
        width = max(len(n) for n in scenarios)
        for name, status in scenarios.items():
            print(f"{name:<{width}}  {status}")
        print(
            f"\n{len(scenarios) - len(failed)}/{len(scenarios)} passed in {res['seconds']:.1f}s"
            + (f"; failed: {', '.join(failed)}" if failed else "")
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
