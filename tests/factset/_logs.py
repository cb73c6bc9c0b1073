"""Logs: an application log, an access log, syslog, JSON lines and CI output, each with ordinary noise
(warnings and errors of common kinds too) and one line that carries the fact."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from ._facts import Fact
from ._words import FIRST, LAST, code

__all__ = ["LOGS"]

Output = tuple[str, dict[str, object], Fact]


def _target(rng: random.Random) -> int:
    return rng.randrange(20_000, 29_000)


def _lines(rng: random.Random, make: Callable[[int], str], fact_line: str, target: int) -> str:
    lines: list[str] = []
    size = 0
    while size < target:
        line = make(len(lines))
        lines.append(line)
        size += len(line) + 1
    lines.insert(rng.randrange(len(lines) // 10, len(lines) - len(lines) // 10), fact_line)
    return "\n".join(lines) + "\n"


def app(rng: random.Random) -> Output:
    host = f"batch-{rng.randrange(10, 99)}"
    question, answer = "Which host held the ledger lock when the refund job aborted?", host
    templates = (
        ("INFO", "[worker-{w}] processed batch {n} in {ms} ms"),
        ("INFO", "[http] GET /api/items/{n} 200 {ms}ms"),
        ("DEBUG", "[cache] evicted {n} keys"),
        ("WARN", "[http] slow response from inventory service ({ms} ms)"),
        ("ERROR", "[cache] timeout contacting redis after {ms} ms, retrying"),
        ("INFO", "[scheduler] job cleanup-{w} finished"),
    )
    weights = (40, 30, 10, 6, 2, 5)
    start = rng.randrange(10**6)

    def stamp(i: int) -> str:
        s = start + i * 3
        return f"2026-03-02T{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{rng.randrange(1000):03d}Z"

    def make(i: int) -> str:
        level, text = rng.choices(templates, weights)[0]
        return f"{stamp(i)} {level:5} " + text.format(
            w=rng.randrange(8), n=rng.randrange(10**5), ms=rng.randrange(2, 3000)
        )

    line = f"{stamp(5000)} ERROR [billing] refund job aborted: ledger lock held by {host} (pid {rng.randrange(1000, 9999)})"
    return (
        _lines(rng, make, line, _target(rng)),
        {"path": "/var/log/app/app.log", "lines": 500},
        Fact(line, question, answer),
    )


def access(rng: random.Random) -> Output:
    ip = f"198.51.100.{rng.randrange(2, 250)}"
    question, answer = "Which IP address posted to the payroll export endpoint?", ip
    paths = (
        "/",
        "/api/v1/items",
        "/api/v1/items/{n}",
        "/static/app.{n}.js",
        "/login",
        "/api/v1/cart",
        "/favicon.ico",
    )
    agents = (
        "Mozilla/5.0 (X11; Linux x86_64) Firefox/124.0",
        "Mozilla/5.0 (Macintosh) Safari/605.1.15",
        "Mozilla/5.0 (Windows NT 10.0) Chrome/123.0",
        "kube-probe/1.29",
    )

    def make(i: int) -> str:
        path = rng.choice(paths).format(n=rng.randrange(10**4))
        status = rng.choices((200, 304, 404, 500), (85, 8, 5, 2))[0]
        return (
            f"10.0.{rng.randrange(8)}.{rng.randrange(256)} - - [02/Mar/2026:10:{i // 60 % 60:02d}:{i % 60:02d} +0000] "
            f'"GET {path} HTTP/1.1" {status} {rng.randrange(200, 90000)} "-" "{rng.choice(agents)}"'
        )

    line = (
        f'{ip} - - [02/Mar/2026:10:31:07 +0000] "POST /api/v1/exports/payroll?format=csv HTTP/1.1" 200 '
        f'{rng.randrange(10**6, 10**7)} "-" "curl/8.5.0"'
    )
    return (
        _lines(rng, make, line, _target(rng)),
        {"path": "/var/log/nginx/access.log"},
        Fact(line, question, answer),
    )


def syslog(rng: random.Random) -> Output:
    device = f"sd{rng.choice('bcdef')}{rng.randrange(1, 9)}"
    question, answer = "Which device reported the I/O error writing to an inode?", device
    host = rng.choice(("edge-01", "nas", "gw-2"))
    templates = (
        "sshd[{p}]: Accepted publickey for deploy from 10.0.0.{o} port {port} ssh2",
        "sshd[{p}]: pam_unix(sshd:session): session closed for user deploy",
        "CRON[{p}]: (root) CMD (/usr/local/bin/backup.sh --incremental)",
        "systemd[1]: Started Session {o} of user deploy.",
        "kernel: [{up}] IPv4: martian source 10.0.0.{o} from 10.0.0.1, on dev eth0",
        "dhclient[{p}]: DHCPACK of 10.0.0.{o} from 10.0.0.1",
        "sshd[{p}]: error: kex_exchange_identification: Connection closed by remote host",
    )

    def make(i: int) -> str:
        text = rng.choice(templates).format(
            p=rng.randrange(300, 40000),
            o=rng.randrange(2, 250),
            port=rng.randrange(30000, 60000),
            up=f"{i * 7.3:.6f}",
        )
        return f"Mar  2 10:{i // 60 % 60:02d}:{i % 60:02d} {host} {text}"

    line = (
        f"Mar  2 11:02:44 {host} kernel: [88123.551020] EXT4-fs warning (device {device}): ext4_end_bio:343: "
        f"I/O error 10 writing to inode {rng.randrange(10**6)} starting block {rng.randrange(10**7)}"
    )
    return _lines(rng, make, line, _target(rng)), {"unit": "all", "host": host}, Fact(line, question, answer)


def jsonl(rng: random.Random) -> Output:
    user = f"{rng.choice(FIRST).lower()}.{rng.choice(LAST).lower()}"
    question, answer = "Which ops user force-enabled the new-checkout feature flag?", user

    def make(i: int) -> str:
        status = rng.choices((200, 201, 404, 503), (80, 10, 7, 3))[0]
        return json.dumps(
            {
                "ts": 1772445600 + i,
                "level": "info" if status < 500 else "error",
                "svc": rng.choice(("api", "web")),
                "msg": "request completed",
                "path": f"/v1/items/{rng.randrange(10**4)}",
                "status": status,
                "ms": rng.randrange(1, 800),
            }
        )

    line = json.dumps(
        {
            "ts": 1772449000,
            "level": "info",
            "svc": "flags",
            "msg": f"feature flag new-checkout force-enabled by ops user {user}",
            "ticket": code(rng, "CHG-9999"),
        }
    )
    return (
        _lines(rng, make, line, _target(rng)),
        {"stream": "prod/api", "limit": 400},
        Fact(line, question, answer),
    )


def ci(rng: random.Random) -> Output:
    test = f"test_{rng.choice(('rounding', 'ledger', 'refund', 'invoice'))}_{rng.choice(('half_even', 'negative', 'bulk', 'leap_day'))}_{rng.randrange(10, 99)}"
    question, answer = "Which test failed with the currency rounding assertion?", test
    modules = ("api", "models", "views", "billing", "auth", "search", "export")

    def make(i: int) -> str:
        kind = rng.random()
        module = rng.choice(modules)
        if kind < 0.75:
            return f"tests/test_{module}.py::test_{module}_{rng.randrange(500)} PASSED{' ' * rng.randrange(1, 20)}[{i % 100:3d}%]"
        if kind < 0.85:
            return f"tests/test_{module}.py::test_{module}_{rng.randrange(500)} SKIPPED (needs network){' ' * 5}[{i % 100:3d}%]"
        if kind < 0.95:
            return f"  /src/app/{module}.py:{rng.randrange(900)}: DeprecationWarning: datetime.utcnow() is deprecated"
        return f"Compiling app/{module}/{rng.randrange(100)}.c ... ok"

    line = (
        f"tests/test_billing.py::{test} FAILED - AssertionError: currency rounding gave 10.04, expected 10.05"
    )
    return (
        _lines(rng, make, line, _target(rng)),
        {"job": "unit-tests", "run": rng.randrange(10**5)},
        Fact(line, question, answer),
    )


LOGS: list[Callable[[random.Random], Output]] = [app, access, syslog, jsonl, ci]
