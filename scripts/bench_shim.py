"""Median latency of one `mcpsq` call against the alternatives, in one run.

    python scripts/bench_shim.py [--runs 30] [--canned]

Starts `mcpsqueeze serve` on a private Unix socket with the demo server (or, with --canned, the
tests' canned session when serve is not available: that measures the shim alone), then times:

- `mcpsq --help` (startup + one listing request), a small call, a ~200 KB call (shrunk, and --full);
- the same small call through the Python MCP client in a fresh process (what a script pays) and
  in-process on a warm connection;
- `mcp-compressor --cli-mode`'s generated command, when `mcp-compressor` is on PATH.

Byte-code caches go to a temporary PYCACHEPREFIX, so the numbers are those of an installed package.
Prints a Markdown table (medians in milliseconds).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def median_ms(argv: list[str], env: dict[str, str], runs: int, stdin: str | None = None) -> float:
    subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True, check=False)  # warm caches
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True, check=False)
        samples.append((time.perf_counter() - start) * 1000)
        if done.returncode not in (0,):
            raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[:500]}")
    return statistics.median(samples)


def wait_for(sock: Path, proc: subprocess.Popen[bytes] | None, deadline_s: float = 60.0) -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from mcpsqueeze.bash._session_http import SessionAddress, SessionClient

    client = SessionClient(SessionAddress(socket_path=str(sock)))
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"mcpsqueeze serve exited with {proc.returncode}")
        with contextlib.suppress(Exception):
            status, _ = client.request("GET", "/v1/health", timeout=2)
            if status == 200:
                return
        time.sleep(0.1)
    raise SystemExit("the session did not become healthy within 60 s")


@contextlib.contextmanager
def session(tmp: Path, canned: bool) -> Iterator[tuple[Path, str]]:
    sock = tmp / "run" / "session.sock"
    sock.parent.mkdir(mode=0o700)
    rec = tmp / "recovery"
    rec.mkdir(mode=0o700)
    if canned:
        sys.path.insert(0, str(ROOT / "tests"))
        from bash.canned_session import Session, serve_unix

        with serve_unix(sock, Session(rec, down=False)):
            yield sock, "canned session (shim cost only)"
        return
    argv = [
        sys.executable,
        "-m",
        "mcpsqueeze.cli",
        "serve",
        "--socket",
        str(sock),
        "--recovery-dir",
        str(rec),
        "--no-dedup",  # every timed call is the same argv: measure shrinking, not pointers
    ]
    argv += ["-n", "demo", "--", sys.executable, "-m", "mcpsqueeze.demo.server"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(sock, proc)
        yield sock, "mcpsqueeze serve + demo server"
    finally:
        proc.terminate()
        proc.wait(10)


DIRECT = """
import sys, anyio
from mcp import Client, StdioServerParameters
async def main():
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcpsqueeze.demo.server"])
    async with Client(params) as client:
        await client.call_tool("echo", {"text": "hi"})
anyio.run(main)
"""

WARM = """
import sys, time, statistics, anyio
from mcp import Client, StdioServerParameters
async def main():
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcpsqueeze.demo.server"])
    async with Client(params) as client:
        samples = []
        for _ in range(int(sys.argv[1])):
            t = time.perf_counter()
            await client.call_tool("echo", {"text": "hi"})
            samples.append((time.perf_counter() - t) * 1000)
        print(statistics.median(samples))
anyio.run(main)
"""


@contextlib.contextmanager
def compressor_command(tmp: Path) -> Iterator[str | None]:
    """Start `mcp-compressor --cli-mode` on the demo server and yield its generated command's path.

    It writes the command (0755, with the bridge URL inside) to a directory on PATH of its choosing
    (/usr/local/bin as root); we remove it afterwards.
    """
    binary = shutil.which("mcp-compressor")
    if binary is None:
        yield None
        return
    name = f"mcsqbench{os.getpid()}"
    argv = [binary, "--cli-mode", "-n", name, "--", sys.executable, "-m", "mcpsqueeze.demo.server"]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    command = None
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and command is None:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("Generated CLI: "):
                command = line.split(": ", 1)[1].strip()
        yield command
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        if command:
            with contextlib.suppress(OSError):
                os.unlink(command)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--canned", action="store_true", help="use the tests' canned session instead of serve"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        with session(tmp, args.canned) as (sock, what):
            env["MCPSQUEEZE_SOCKET"] = str(sock)
            # The installed `mcpsq` next to this interpreter (what a shell runs), else its equivalent.
            installed = Path(sys.executable).parent / "mcpsq"
            shim = (
                [str(installed)]
                if installed.is_file()
                else [sys.executable, "-I", "-c", "from mcpsqueeze.bash.shim import console; console()"]
            )
            rows = [
                (
                    "python -c pass (interpreter floor)",
                    median_ms([sys.executable, "-I", "-c", "pass"], env, args.runs),
                ),
                ("mcpsq --help", median_ms([*shim, "--help"], env, args.runs)),
                (
                    "mcpsq demo echo --text hi (small)",
                    median_ms([*shim, "demo", "echo", "--text", "hi"], env, args.runs),
                ),
                (
                    "mcpsq demo list-rows --n 1050 (~200 KB, shrunk)",
                    median_ms([*shim, "demo", "list-rows", "--table", "t", "--n", "1050"], env, args.runs),
                ),
                (
                    "mcpsq demo list-rows --n 1050 --full (~200 KB)",
                    median_ms(
                        [*shim, "demo", "list-rows", "--table", "u", "--n", "1050", "--full"], env, args.runs
                    ),
                ),
            ]
            direct_runs = max(3, args.runs // 5)
            rows.append(
                (
                    "Python MCP client, fresh process (small)",
                    median_ms([sys.executable, "-c", DIRECT], env, direct_runs),
                )
            )
            warm = subprocess.run(
                [sys.executable, "-c", WARM, str(args.runs)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            rows.append(("Python MCP client, warm in-process call (small)", float(warm.stdout.strip())))
            with compressor_command(tmp) as command:
                command_ran = command is not None
                if command is None:
                    rows.append(("mcp-compressor --cli-mode command (small)", float("nan")))
                else:
                    small = median_ms([command, "echo", "--text", "hi"], env, args.runs)
                    rows.append(("mcp-compressor --cli-mode command (small)", small))
                    big = [command, "list-rows", "--table", "t", "--n", "1050"]
                    rows.append(
                        ("mcp-compressor --cli-mode command (~200 KB)", median_ms(big, env, args.runs))
                    )
        print(f"Session: {what}; {args.runs} runs each (fresh process: {direct_runs}); medians in ms.\n")
        print(f"Shim: {' '.join(shim)}\n")
        print("| measurement | median ms |\n|---|---:|")
        for name, value in rows:
            shown = "not installed" if value != value else f"{value:.1f}"
            print(f"| {name} | {shown} |")
        ours, theirs = rows[2][1], rows[-2][1] if command_ran else float("nan")
        if theirs == theirs:
            print(f"\nSmall call: mcp-compressor's command takes {theirs / ours:.1f}x as long as mcpsq.")


if __name__ == "__main__":
    main()
