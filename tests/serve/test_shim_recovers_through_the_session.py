"""`mcpsq recover ID` asks the session first: it answers from the caller's own originals (memory, files,
Redis), whatever name a tenant's local file carries, and counts the recovery as every door's is counted.
It reads the recovery directory itself only when the session is not there or does not have it. The serve
runs in this process (memwrap.Serve), the shim's `run` too."""

from __future__ import annotations

import json
import re
import secrets
import sys
import urllib.request
from pathlib import Path

from serve_api import api, serve_in_process, write_token

from mcpsqueeze.bash.shim import run
from memwrap import Serve, run_cli
from rawclient import wait_for

DEMO = ("-n", "demo", "--", sys.executable, "-m", "mcpsqueeze.demo.server")
CALL = ["demo", "read-file", "--path", "notes.md"]


def _tenants(tmp_path: Path) -> tuple[Path, str, str]:
    """A tenants file (alice, bob) and alice's own token file, as her shell holds it."""
    secret = tmp_path / "secret"
    secret.mkdir(mode=0o700)
    alice, bob = secrets.token_hex(32), secrets.token_hex(32)
    write_token(secret / "tenants", f"alice:{alice}\nbob:{bob}\n")
    write_token(secret / "alice", alice)
    return secret, alice, bob


def _rid(notice: str) -> str:
    match = re.search(r"mcpsq recover ([0-9a-f]{32})", notice)
    assert match, notice
    return match.group(1)


def test_mcpsq_recover_with_the_id_a_named_tenants_notice_gives_prints_the_original(tmp_path: Path) -> None:
    secret, alice, bob = _tenants(tmp_path)
    rec = tmp_path / "rec"
    with serve_in_process(
        "--recovery-dir", str(rec), "--budget", "2000", "--listen", "127.0.0.1:0",
        "--token-file", str(secret / "tenants"), *DEMO,
    ) as url:  # fmt: skip
        env = {"MCPSQUEEZE_URL": url, "MCPSQUEEZE_TOKEN_FILE": str(secret / "alice")}
        shown = run(CALL, env)
        assert shown.code == 0, shown.stderr
        rid = _rid(shown.stderr)
        status, whole = api(url, alice, f"/v1/recover/{rid}")
        assert status == 200
        original = whole["result"]["content"][0]["text"]
        recovered = run(["recover", rid], env)
        assert (recovered.code, recovered.stderr) == (0, "")
        assert recovered.stdout == original
        part = run(["recover", rid, "--lines", "2-3"], env)
        assert part.code == 0 and part.stdout == "".join(original.splitlines(keepends=True)[1:3])
        # The same id in bob's shell: his session view has no such original, nor has the directory.
        write_token(secret / "bob", bob)
        theirs = run(["recover", rid], {**env, "MCPSQUEEZE_TOKEN_FILE": str(secret / "bob")})
        assert theirs.code == 2 and original[:40] not in theirs.stdout + theirs.stderr
        assert "There is no recovery file" in theirs.stderr


def test_mcpsq_recover_reads_the_recovery_directory_when_no_session_answers(tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    token = tmp_path / "token"
    write_token(token)
    with serve_in_process(
        "--recovery-dir", str(rec), "--budget", "2000", "--listen", "127.0.0.1:0", "--token-file", str(token),
        *DEMO,
    ) as url:  # fmt: skip
        env = {"MCPSQUEEZE_URL": url, "MCPSQUEEZE_TOKEN_FILE": str(token)}
        rid = _rid(run(CALL, env).stderr)
        online = run(["recover", rid], env)
    offline = run(["recover", rid], {**env, "MCPSQUEEZE_RECOVERY_DIR": str(rec)})
    assert (offline.code, offline.stderr) == (0, "")
    assert (
        offline.stdout
        == online.stdout
        == json.loads((rec / f"mcpsqueeze-{rid}.json").read_text())["content"][0]["text"]
    )


def test_mcpsq_recover_is_counted_in_stats_metrics_the_report_and_the_summary(tmp_path: Path) -> None:
    token = tmp_path / "token"
    secret = write_token(token)
    stats = tmp_path / "stats.jsonl"
    args = [
        "--recovery-dir", str(tmp_path / "rec"), "--budget", "2000", "--stats-file", str(stats),
        "--listen", "127.0.0.1:0", "--token-file", str(token), *DEMO,
    ]  # fmt: skip
    with Serve(args) as served:
        url = served.where
        env = {"MCPSQUEEZE_URL": url, "MCPSQUEEZE_TOKEN_FILE": str(token)}
        rid = _rid(run(CALL, env).stderr)
        assert run(["recover", rid], env).code == 0
        assert run(["recover", rid, "--lines", "1-2"], env).code == 0
        request = urllib.request.Request(f"{url}/metrics", headers={"Authorization": f"Bearer {secret}"})
        counted = re.compile(r'^mcpsqueeze_recovered_total\{server="demo",tool="read_file"\} (\S+)$', re.M)

        def recovered() -> re.Match[str] | None:  # counted off the response path: soon, not at once
            with urllib.request.urlopen(request, timeout=30) as response:
                return counted.search(response.read().decode())

        assert wait_for(recovered, 30, "the recoveries in /metrics").group(1) == "2.0"
    summary = served.stderr
    assert re.search(r"^  recovered        2$", summary, re.M), summary
    assert [json.loads(line)["response_id"] for line in stats.read_text().splitlines()].count(rid) == 3
    report = run_cli("stats", "--json", "--html", str(tmp_path / "r.html"), str(stats))
    assert json.loads(report.stdout)["totals"]["recovered"] == 2
    assert "<h2>Recovered (2)</h2>" in (tmp_path / "r.html").read_text()
