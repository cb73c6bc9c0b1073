"""CPU per call of `wrap` (and its helpers), load-independent: what a call costs, not how long it waits.

Wall-clock latency on a shared 2-core machine is mostly the other work's noise; the CPU time a process
spends per message is not (it moves a little with cache pressure, not with the run queue). This spawns
`wrap` in front of the stdlib `mcpsqueeze.demo.bulk` server from one or more source trees, warms it up,
then sends N sequential `tools/call`s of one size and reads each process's CPU time (the sum of
`/proc/PID/task/*/schedstat`, nanoseconds) before and after, plus voluntary context switches (wake-ups).
`--callgrind` runs the proxy under `valgrind --tool=callgrind` instead and reports instructions per call
(collection switched on only around the measured calls).

    python scripts/bench_cpu.py [--calls 400] [--size 1000] [--src SRC ...] [--anchor] [--floor]
    python scripts/bench_cpu.py --callgrind --calls 200 --src src --src /tmp/base38/src

`--anchor` adds mcp-compressor 0.38.2 (`--shrinkfit=20000`, compressed-tools mode, as bench_session runs
it); `--floor` a minimal Python line relay (os.read/os.write, no parsing): the pipe hop itself.
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _loopback import serve_stdio

ROOT = Path(__file__).resolve().parents[1]
COMPRESSOR = Path(
    os.environ.get("MCPSQUEEZE_BENCH_MCPC") or ROOT / ".cache" / "mcpc" / "bin" / "mcp-compressor"
)

_FLOOR = r"""
import os, select, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
a_in, b_in, b_out = 0, p.stdout.fileno(), p.stdin.fileno()
while True:
    r, _, _ = select.select([a_in, b_in], [], [])
    for fd in r:
        data = os.read(fd, 1 << 20)
        if not data:
            sys.exit(0)
        os.write(b_out if fd == a_in else 1, data)
"""


def _cpu_ns(pid: int) -> int:
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def _switches(pid: int) -> int:
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids = [int(c) for c in f.read().split()]
        except OSError:
            continue
        for kid in kids:
            found += [kid, *_descendants(kid)]
    return found


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


class Client:
    def __init__(self, argv: list[str], env: dict[str, str], stderr: int | None = None) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env, bufsize=0
        )
        self.ids = itertools.count(1)
        self.buffer = b""

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request_id = next(self.ids)
        self.proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
            + b"\n"
        )
        while True:
            while b"\n" not in self.buffer:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise RuntimeError("the proxy closed its stdout")
                self.buffer += chunk
            line, _, self.buffer = self.buffer.partition(b"\n")
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "cpu", "version": "1"},
            },
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_SESSION: list[dict[str, Any]] = []
_REPLAY: Path | None = None  # --session: the backend replays this captured session instead
_ANSWERS: list[dict[str, Any]] = []  # --dump: each session call's answer, as the proxy gave it


def _backend() -> list[str]:
    if _REPLAY is not None:
        return [sys.executable, str(Path(__file__).resolve()), "--serve-replay", str(_REPLAY)]
    return [sys.executable, "-m", "mcpsqueeze.demo.bulk"]


def _key(params: dict[str, Any]) -> str:
    """A call as the replay backend knows it: its tool and arguments (a proxy may add `_meta`)."""
    return json.dumps([params.get("name"), params.get("arguments") or {}], sort_keys=True)


def serve_replay(path: Path) -> None:
    """A stdio backend answering the i-th `tools/call` with the i-th captured result (cycling)."""
    calls = [c for c in json.loads(path.read_text())["calls"] if c["method"] == "tools/call"]
    answers: dict[str, list[Any]] = {}
    for c in calls:
        answers.setdefault(_key(c["params"]), []).append(c["answer"].get("result", {}))
    served: dict[str, int] = {}

    def call(params: dict[str, Any]) -> Any:
        key = _key(params)
        n = served.get(key, 0)
        served[key] = n + 1
        return answers[key][n % len(answers[key])]

    serve_stdio("replay", sorted({c["params"]["name"] for c in calls}), call)


def capture(path: Path) -> None:
    """Run bench_session's 39-call session directly once (real servers) and keep every request and answer."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_session as bs

    workdir = Path(tempfile.mkdtemp(prefix="bench-cpu-capture-"))
    kept: list[dict[str, Any]] = []
    request = bs.Peer.request

    def keep(self: Any, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        took, answer = request(self, method, params)
        kept.append({"method": method, "params": params, "answer": answer})
        return took, answer

    bs.Peer.request = keep  # type: ignore[method-assign]
    try:
        bs.run_session(bs.configurations(20000)[0], 0, 0, bs._repo(workdir), workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    path.write_text(json.dumps({"calls": kept}))


def _wrap_argv(workdir: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "mcpsqueeze.cli", "wrap", "--recovery-dir", str(workdir / "recovery"),
            "--stats-file", str(workdir / "stats.jsonl"), *extra, "--", *_backend()]  # fmt: skip


def _call(client: Client, anchor: bool, size: int, seed: int) -> None:
    if _REPLAY is not None:
        if not _SESSION:
            _SESSION[:] = [c for c in json.loads(_REPLAY.read_text())["calls"] if c["method"] == "tools/call"]
        calls = _SESSION
        params = calls[seed % len(calls)]["params"]
        if anchor:
            tool_input = {"tool_name": params["name"], "tool_input": params.get("arguments") or {}}
            params = {"name": "bulk_invoke_tool", "arguments": tool_input}
        answer = client.request("tools/call", params)
        assert "result" in answer, answer
        _ANSWERS.append(answer)
        return
    args = {"size": size, "seed": seed}
    if anchor:
        client.request(
            "tools/call", {"name": "bulk_invoke_tool", "arguments": {"tool_name": "blob", "tool_input": args}}
        )
    else:
        answer = client.request("tools/call", {"name": "blob", "arguments": args})
        assert "result" in answer, answer


def _is_backend(pid: int) -> bool:
    line = _cmdline(pid)
    return b"mcpsqueeze.demo.bulk" in line or b"--serve-replay" in line


_RANDOM_ID = re.compile(r"\b[0-9a-f]{32}\b")
_TOKENS = re.compile(r"~?[0-9][0-9,]* tokens")


def dump(path: Path, answers: list[dict[str, Any]], workdir: Path) -> None:
    """The proxy's answers to the session's calls, comparable across runs and source trees: response ids,
    the run's directory and a dedup pointer's token figure (exact or estimated, by the counter's timing)
    replaced by placeholders."""
    text = json.dumps([a.get("result") for a in answers], indent=1, sort_keys=True)
    text = _TOKENS.sub("<N> tokens", _RANDOM_ID.sub("<ID>", text.replace(str(workdir), "<DIR>")))
    path.write_text(text)


def measure(
    name: str, argv: list[str], env: dict[str, str], args: argparse.Namespace, anchor: bool = False
) -> dict[str, Any]:
    client = Client(argv, env)
    client.initialize()
    client.request("tools/list", {})
    for seed in range(args.warmup):
        _call(client, anchor, args.size, 10_000 + seed)
    time.sleep(args.settle)  # the warm-up's accounting and the helper's start are over
    pid = client.proc.pid

    def others() -> dict[int, int]:
        return {p: _cpu_ns(p) for p in _descendants(pid)}

    before, proxy0, switches0 = others(), _cpu_ns(pid), _switches(pid)
    per_call: list[float] = []
    wall = time.perf_counter()
    for seed in range(args.calls):
        mark = _cpu_ns(pid)
        _call(client, anchor, args.size, seed)
        per_call.append((_cpu_ns(pid) - mark) / 1000)
    wall = time.perf_counter() - wall
    proxy1, switches1 = _cpu_ns(pid), _switches(pid)
    time.sleep(args.settle)  # accounting done in idle time is still this run's CPU
    after, proxy2 = others(), _cpu_ns(pid)
    backends = {p for p in after if _is_backend(p)}  # (before close: the command lines go with them)
    client.close()
    backend = sum(after[p] - before.get(p, 0) for p in backends)
    helpers = sum(max(0, after[p] - before.get(p, 0)) for p in after if p not in backends)
    n = args.calls
    return {
        "proxy_us": (proxy1 - proxy0) / n / 1000,
        "after_us": (proxy2 - proxy1) / n / 1000,
        "helper_us": helpers / n / 1000,
        "backend_us": backend / n / 1000,
        "wakeups": (switches1 - switches0) / n,
        "wall_ms": wall / n * 1000,
        "per_call": per_call,
    }


def callgrind(
    name: str, argv: list[str], env: dict[str, str], args: argparse.Namespace, workdir: Path
) -> float:
    out = (args.keep or workdir) / f"callgrind.{name.replace('/', '_').replace(' ', '_')}.out"
    vg = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        "--separate-threads=yes",
        f"--callgrind-out-file={out}",
        "--trace-children=no",
    ]
    client = Client(vg + argv, env, stderr=subprocess.PIPE)
    client.initialize()
    client.request("tools/list", {})
    for seed in range(args.warmup):
        _call(client, False, args.size, 10_000 + seed)
    time.sleep(args.settle)
    pid = str(client.proc.pid)
    subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)  # (nothing before)
    subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
    for seed in range(args.calls):
        _call(client, False, args.size, seed)
        if args.per_call:  # a dump per call: its instructions, every thread's, since the last dump
            subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
    subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)
    client.close()
    assert client.proc.stderr is not None
    log = client.proc.stderr.read().decode(errors="replace")
    found = re.search(r"Collected : (\d+)", log)
    if found is None:
        raise RuntimeError("no instruction count from callgrind: " + log[-2000:])
    if args.per_call:
        parts: dict[int, int] = {}
        main: dict[int, int] = {}  # the main thread's (the event loop: relay, stages, engine)
        for dump in out.parent.glob(out.name + ".*"):
            part = re.match(r"\.(\d+)(-\d+)?$", dump.name[len(out.name) :])
            summary = re.search(r"^summary: (\d+)", dump.read_text(errors="replace"), re.M)
            if part is not None and summary is not None:
                k = int(part.group(1))
                parts[k] = parts.get(k, 0) + int(summary.group(1))
                if part.group(2) in (None, "-01"):
                    main[k] = main.get(k, 0) + int(summary.group(1))
        _CALLGRIND_PER_CALL[name] = [parts.get(k, 0) / 1e6 for k in sorted(parts)][: args.calls]
        _CALLGRIND_MAIN[name] = [main.get(k, 0) / 1e6 for k in sorted(parts)][: args.calls]
    return int(found.group(1)) / args.calls


_CALLGRIND_PER_CALL: dict[str, list[float]] = {}  # --callgrind --per-call: M instructions of each call
_CALLGRIND_MAIN: dict[str, list[float]] = {}  # ... of its main thread alone


def _print_callgrind_per_call(calls: int) -> None:
    names = list(_CALLGRIND_PER_CALL)
    print("\n  M instructions per call: every thread of the proxy / its main thread (the event loop, where")
    print("  the stages and the engine run; the others: the memory store's compression, file writes)")
    print("  call" + " " * 23 + " ".join(f"{n[-24:]:>24}" for n in names))
    for i in range(calls):
        cells = []
        for n in names:
            every, main = _CALLGRIND_PER_CALL[n][i : i + 1] or [0.0], _CALLGRIND_MAIN[n][i : i + 1] or [0.0]
            cells.append(f"{every[0]:.2f} / {main[0]:.2f}")
        label = _SESSION[i % len(_SESSION)]["params"]["name"] if _SESSION else str(i)
        print(f"  {i:3} {label[:22]:22} " + " ".join(f"{c:>24}" for c in cells))
    for n in names:
        every, main = statistics.mean(_CALLGRIND_PER_CALL[n]), statistics.mean(_CALLGRIND_MAIN[n])
        print(f"  mean per call, all / main: {n[-40:]:40} {every:.2f} / {main:.2f} M")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--size", type=int, default=1000, help="characters of JSON per result")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--settle", type=float, default=1.5, help="seconds idle before and after")
    parser.add_argument("--src", action="append", type=Path, help="source trees (default this one)")
    parser.add_argument("--extra", default="", help="wrap options, space-separated")
    parser.add_argument("--anchor", action="store_true")
    parser.add_argument("--floor", action="store_true")
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--keep", type=Path, help="--callgrind: keep the callgrind files in this directory")
    parser.add_argument("--per-call", action="store_true", help="also each call's proxy CPU")
    parser.add_argument("--repeat", type=int, default=1, help="runs per configuration, interleaved")
    parser.add_argument(
        "--session", type=Path, help="replay this captured session (see --capture) as the calls"
    )
    parser.add_argument("--capture", type=Path, help="run bench_session's session directly and keep it here")
    parser.add_argument(
        "--dump",
        type=Path,
        help="with --session and one --src: write the proxy's answers here (ids, paths normalised), to "
        "compare previews across source trees",
    )
    parser.add_argument("--serve-replay", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_replay:
        serve_replay(args.serve_replay)
        return
    if args.capture:
        capture(args.capture)
        return
    global _REPLAY
    _REPLAY = args.session
    if args.session:  # a fresh process per run, as bench_session: a warm-up would make every call a repeat
        args.warmup = 0
    if args.callgrind:  # under valgrind (~50x slower) the proxy's own warm-up must be over before counting
        args.settle = max(args.settle, 5.0)
    trees = args.src or [ROOT / "src"]
    if args.dump and (not args.session or len(trees) != 1 or args.anchor or args.floor or args.repeat != 1):
        parser.error("--dump takes --session and one --src (no --anchor, --floor, --repeat)")
    workdir = Path(tempfile.mkdtemp(prefix="bench-cpu-"))
    extra = args.extra.split()
    configs: list[tuple[str, list[str], dict[str, str], bool]] = []
    for tree in trees:
        tree = tree.resolve()
        compileall.compile_dir(str(tree), quiet=1)
        env = {**os.environ, "PYTHONPATH": str(tree)}
        configs.append((f"wrap {tree}", _wrap_argv(workdir, extra), env, False))
    plain = {**os.environ, "PYTHONPATH": str(trees[0].resolve())}
    if args.floor:
        configs.append(
            ("floor (python line relay)", [sys.executable, "-c", _FLOOR, *_backend()], plain, False)
        )
    if args.anchor:
        configs.append(
            (
                "mcp-compressor",
                [str(COMPRESSOR), "--shrinkfit=20000", "-n", "bulk", "--", *_backend()],
                plain,
                True,
            )
        )
    try:
        if args.callgrind:
            for name, argv, env, anchor in configs:
                if anchor:
                    continue
                per_call = callgrind(name, argv, env, args, workdir) / 1e6
                print(f"{name:60} {per_call:8.2f} M instructions per call", flush=True)
            if args.per_call and _CALLGRIND_PER_CALL:
                _print_callgrind_per_call(args.calls)
            if args.dump:
                dump(args.dump, _ANSWERS, workdir)
            return
        results: dict[str, list[dict[str, float]]] = {c[0]: [] for c in configs}
        for r in range(args.repeat):
            shift = r % len(configs)
            for name, argv, env, anchor in configs[shift:] + configs[:shift]:
                results[name].append(measure(name, argv, env, args, anchor))
        if args.dump:
            dump(args.dump, _ANSWERS, workdir)
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        print(
            f"== {args.calls} calls of {args.size} chars, {args.repeat} run(s), load {load}; medians per call"
        )
        heads = ("proxy us", "after us", "helper us", "backend us", "wakeups", "wall ms")
        print(f"  {'configuration':58} " + " ".join(f"{h:>10}" for h in heads))
        for name, rows in results.items():
            keys = ("proxy_us", "after_us", "helper_us", "backend_us", "wakeups", "wall_ms")
            med = {k: statistics.median(r[k] for r in rows) for k in keys}
            print(f"  {name[-58:]:58} " + " ".join(f"{med[k]:10.1f}" for k in keys))
        if args.per_call:
            names = list(results)
            print("\n  proxy CPU per call (us, all its threads, median of runs)")
            print("  call " + " ".join(f"{n[-24:]:>24}" for n in names))
            for i in range(args.calls):
                cells = [statistics.median(r["per_call"][i] for r in results[n]) for n in names]
                label = _SESSION[i % len(_SESSION)]["params"]["name"] if _SESSION else str(i)
                print(f"  {i:3} {label[:22]:22} " + " ".join(f"{c:24.0f}" for c in cells))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
