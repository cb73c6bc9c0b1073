"""The benchmarks behind the figures in docs/benchmarks.md, on one harness.

    python -m scripts.bench BENCHMARK [--tree SPEC ...] [--out FILE] [options]

Run from the repository root. ``--tree`` names the mcpsqueeze to measure: ``.`` (this checkout, the
default), a directory, or a git revision (extracted with ``git archive``); several are measured side by
side, interleaved. Each benchmark prints one JSON report: the command, the date, the machine and its
load, and the figures (latencies as median and p90). Peers, each in its own venv, are found under
``.cache`` (or where ``MCPSQUEEZE_BENCH_MCPC`` and ``MCPSQUEEZE_BENCH_TOOLTRIM`` name them)::

    python3 -m venv .cache/mcpc && .cache/mcpc/bin/pip install mcp-compressor==0.38.2
    python3 -m venv .cache/tooltrim && .cache/tooltrim/bin/pip install 'tooltrim[mcp]==0.3.3'
    pip install -e '.[bench]'   # shrinkfit, for the shrink benchmark's peer column
"""

GUIDE = __doc__
BENCHMARKS = {
    "latency": "the replayed session and a 200 KB call: direct, mcp-compressor and wrap, added latency",
    "peers": "the replayed session's tokens, recoveries, landmarks and agent cost, beside peers; tools/list",
    "clients": "the replayed session as Claude Code's and Codex's models see it",
    "facts": "the fact set: is what matters visible in the preview, and at what cost",
    "shrink": "preview time per MB for each format",
    "recover": "what one recovery holds in memory and takes: grep, search and a page of a big original",
    "replica": "calls per second of one streamable-HTTP replica with its originals in Redis",
}
