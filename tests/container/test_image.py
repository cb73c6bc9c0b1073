"""The real image, run the way the README says: hardened, no network, a host directory at /recovery."""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from recipes import COMPRESSOR_RECIPE

from .conftest import IMAGE_GID, IMAGE_UID, Box, empty, wait_ready

pytestmark = pytest.mark.container

RECOVERY_NAME = re.compile(r"^mcpsqueeze-([0-9a-f]{32})\.json$")
LOG_LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ mcpsqueeze-cleanup dir=(?P<dir>\S+) result=(?P<result>\w+) "
    r"(?:deleted=(?P<deleted>\d+) freed_bytes=(?P<freed>\d+) kept=(?P<kept>\d+) kept_bytes=\d+ "
    r"|reason=locked )?exit=(?P<exit>\d+)$"
)


def recovery_files(directory: Path) -> dict[str, Path]:
    return {m.group(1): p for p in directory.iterdir() if (m := RECOVERY_NAME.match(p.name))}


def new_name() -> str:
    return f"mcpsqueeze-{secrets.token_hex(16)}.json"


def plant(box: Box, name: str, size: int = 100, age: str | None = None) -> None:
    """Create /recovery/NAME as the image's user, inside the container, and age it with `touch -d`."""
    script = f"umask 077; head -c {size} /dev/zero | tr '\\0' x > /recovery/{name}"
    if age:
        script += f" && touch -d '{age}' /recovery/{name}"
    result = box.sh(script)
    assert result.code == 0, result


# ------------------------------------------------------------------------------ the image itself
def test_image_runs_as_uid_10001_with_a_healthcheck_that_asks_the_session(
    docker_client: Any, image: str
) -> None:
    config = docker_client.images.get(image).attrs["Config"]
    assert config["User"] == f"{IMAGE_UID}:{IMAGE_GID}"
    assert "/recovery" in config["Volumes"]
    assert config["Healthcheck"]["Test"][1:3] == ["mcpsqueeze", "health"]
    assert config["Env"] and any(e == "MCPSQUEEZE_RECOVERY_DIR=/recovery" for e in config["Env"])


def test_the_sandbox_has_a_read_only_root_no_network_and_no_capabilities(sandbox: Box) -> None:
    assert sandbox.sh("touch /etc/x /opt/mcpsqueeze/x").code != 0
    interfaces = [
        line.split(":")[0].strip() for line in sandbox.sh("cat /proc/net/dev").stdout.splitlines()[2:]
    ]
    assert interfaces == ["lo"]
    status = sandbox.run("cat", "/proc/self/status").stdout
    assert re.search(r"^CapEff:\s+0+$", status, re.M), status
    assert re.search(r"^NoNewPrivs:\s+1$", status, re.M), status
    assert re.search(rf"^Uid:\s+{IMAGE_UID}\s+{IMAGE_UID}\s+{IMAGE_UID}\s+{IMAGE_UID}$", status, re.M)


# ------------------------------------------------------------------------------ cleanup (no session)
@pytest.fixture
def clean_box(sandbox: Box) -> Box:
    empty(sandbox.recovery)
    return sandbox


def test_cleanup_deletes_aged_recovery_files_and_keeps_fresh_ones_and_other_names(clean_box: Box) -> None:
    old = [new_name() for _ in range(3)]
    fresh = [new_name() for _ in range(2)]
    old_tmp = "." + new_name() + ".tmp"
    for name in old:
        plant(clean_box, name, age="3 days ago")
    for name in fresh:
        plant(clean_box, name)
    plant(clean_box, old_tmp, age="3 days ago")
    plant(clean_box, "notes.json", age="3 days ago")
    plant(clean_box, "mcpsqueeze-not-an-id.json", age="3 days ago")

    result = clean_box.run("mcpsqueeze", "clean", "/recovery", "--max-age", "24h", "--json")

    assert result.code == 0, result
    report = json.loads(result.stdout)
    assert sorted(report["deleted"]) == sorted([*old, old_tmp])
    left = sorted(p.name for p in clean_box.recovery.iterdir())
    assert left == sorted([*fresh, "notes.json", "mcpsqueeze-not-an-id.json"])


def test_cleanup_never_follows_a_planted_symlink_to_a_host_file(clean_box: Box, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.json"
    secret.write_text('{"secret": true}')
    old = time.time() - 5 * 86400
    os.utime(secret, (old, old))
    link = clean_box.recovery / new_name()
    link.symlink_to(secret)
    os.utime(link, (old, old), follow_symlinks=False)
    dir_link = clean_box.recovery / new_name()
    dir_link.symlink_to(tmp_path, target_is_directory=True)

    result = clean_box.run("mcpsqueeze", "clean", "/recovery", "--max-age", "1s", "--json")

    assert result.code == 0, result
    assert json.loads(result.stdout)["deleted"] == []
    assert secret.read_text() == '{"secret": true}'
    assert link.is_symlink() and dir_link.is_symlink()


def test_max_bytes_deletes_the_oldest_first(clean_box: Box) -> None:
    names = [new_name() for _ in range(4)]
    for minutes, name in zip((40, 30, 20, 10), names, strict=True):
        plant(clean_box, name, size=1000, age=f"{minutes} minutes ago")

    result = clean_box.run(
        "mcpsqueeze", "clean", "/recovery", "--max-age", "24h", "--max-bytes", "2500", "--json"
    )

    assert result.code == 0, result
    assert json.loads(result.stdout)["deleted"] == names[:2]
    assert sorted(recovery_files(clean_box.recovery)) == sorted(n[11:43] for n in names[2:])


def test_two_cleanups_at_once_both_succeed_and_delete_everything_aged(clean_box: Box) -> None:
    names = [new_name() for _ in range(60)]
    clean_box.sh(
        "umask 077; cd /recovery && for n in " + " ".join(names) + "; do echo '{}' > $n; done"
        " && touch -d '2 days ago' mcpsqueeze-*.json"
    )
    script = (
        "mcpsqueeze clean /recovery --max-age 1h --json > /tmp/a.json & a=$!; "
        "mcpsqueeze clean /recovery --max-age 1h --json > /tmp/b.json & b=$!; "
        "mcpsqueeze-cleanup /recovery 1h > /tmp/c.log & c=$!; "
        "mcpsqueeze-cleanup /recovery 1h > /tmp/d.log & d=$!; "
        "wait $a; ra=$?; wait $b; rb=$?; wait $c; rc=$?; wait $d; rd=$?; echo $ra $rb $rc $rd; "
        "cat /tmp/a.json /tmp/b.json /tmp/c.log /tmp/d.log"
    )

    result = clean_box.sh(script)

    assert result.stdout.splitlines()[0] == "0 0 0 0", result
    reports = [json.loads(line) for line in result.stdout.splitlines()[1:3]]
    deleted = [n for r in reports for n in r["deleted"]]
    assert len(deleted) == len(set(deleted)), "two cleanups claimed the same deletion"
    assert recovery_files(clean_box.recovery) == {}
    for line in result.stdout.splitlines()[3:]:
        assert (m := LOG_LINE.match(line)) and m["exit"] == "0", line


def test_the_cron_script_works_on_the_read_only_root_and_logs_one_line(clean_box: Box) -> None:
    old, fresh = new_name(), new_name()
    plant(clean_box, old, size=500, age="2 days ago")
    plant(clean_box, fresh, size=300)
    crontab = clean_box.run("cat", "/etc/mcpsqueeze/crontab").stdout
    assert "mcpsqueeze-cleanup /recovery" in crontab

    result = clean_box.run("mcpsqueeze-cleanup")

    assert result.code == 0, result
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result
    m = LOG_LINE.match(lines[0])
    assert m, lines[0]
    assert (m["dir"], m["result"], m["deleted"], m["freed"], m["kept"]) == (
        "/recovery",
        "ok",
        "1",
        "500",
        "1",
    )
    assert [p.name for p in clean_box.recovery.iterdir()] == [fresh]


def test_the_cron_script_exits_2_when_the_directory_is_refused(clean_box: Box) -> None:
    clean_box.sh("umask 022; mkdir -m 0777 /recovery/open && chmod 0777 /recovery/open")

    result = clean_box.run("mcpsqueeze-cleanup", "/recovery/open")

    assert result.code == 2, result
    assert "result=refused" in result.stdout and "writable by group or others" in result.stderr


# ------------------------------------------------------------------------------ the session proxy
def test_every_process_in_the_container_runs_as_uid_10001(proxy: Box) -> None:
    script = (
        'for p in /proc/[0-9]*; do [ -r "$p/status" ] && '
        'awk \'/^(Name|Uid):/{printf "%s ", $2} END{print ""}\' "$p/status"; done'
    )
    lines = [line.split() for line in proxy.sh(script).stdout.splitlines() if line.strip()]
    assert len(lines) >= 3, lines  # init, entrypoint or serve, the demo backend
    assert all(uid == str(IMAGE_UID) for _name, uid in lines), lines
    pid1 = proxy.run("cat", "/proc/1/status").stdout
    assert re.search(r"^CapEff:\s+0+$", pid1, re.M) and re.search(r"^NoNewPrivs:\s+1$", pid1, re.M)


def test_docker_reports_the_container_healthy(proxy: Box) -> None:
    def health() -> str:
        proxy.raw.reload()
        return str(proxy.raw.attrs["State"].get("Health", {}).get("Status"))

    deadline = time.monotonic() + 30
    while health() != "healthy" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert health() == "healthy", proxy.raw.attrs["State"].get("Health")


def test_a_large_shim_result_is_kept_as_a_private_file_the_host_sees(proxy: Box) -> None:
    before = set(recovery_files(proxy.recovery))

    result = proxy.run("mcpsq", "demo", "search-issues", "--query", "container")

    assert result.code == 0, result
    preview = json.loads(result.stdout)  # a shrunk JSON preview is still JSON
    assert len(result.stdout) < 100_000
    new = set(recovery_files(proxy.recovery)) - before
    assert len(new) == 1, (sorted(new), result)
    (rid,) = new
    assert rid in result.stderr, result.stderr
    assert preview.get("truncation", {}).get("response_id", rid) == rid
    path = recovery_files(proxy.recovery)[rid]
    st = path.lstat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    assert (st.st_uid, st.st_gid) == (IMAGE_UID, IMAGE_GID)
    dst = proxy.recovery.stat()
    assert stat.S_IMODE(dst.st_mode) == 0o700 and dst.st_uid == IMAGE_UID
    original = json.loads(path.read_text("utf-8"))
    assert original["content"][0]["type"] == "text"
    assert len(original["content"][0]["text"]) > 100_000
    assert not [p for p in proxy.recovery.iterdir() if p.name.endswith(".tmp")]


def _a_recovery_file(proxy: Box) -> tuple[str, dict[str, object]]:
    files = recovery_files(proxy.recovery)
    if not files:
        result = proxy.run("mcpsq", "demo", "search-issues", "--query", "recover-me")
        assert result.code == 0, result
        files = recovery_files(proxy.recovery)
    rid, path = sorted(files.items())[0]
    return rid, json.loads(path.read_text("utf-8"))


def test_the_agent_reads_the_original_back_with_mcpsq_recover_and_jq(proxy: Box) -> None:
    rid, original = _a_recovery_file(proxy)
    text = original["content"][0]["text"]  # type: ignore[index]
    document = json.loads(text)

    by_id = proxy.run("mcpsq", "recover", rid)
    by_path = proxy.run("mcpsq", "recover", f"/recovery/mcpsqueeze-{rid}.json")
    one = proxy.run("mcpsq", "recover", rid, "--pointer", "/issues/0")
    with_jq = proxy.sh(
        f"jq -rj '.content[0].text' /recovery/mcpsqueeze-{rid}.json | jq -c '.issues | length'"
    )
    piped = proxy.sh(f"mcpsq recover {rid} | jq -c '.issues[0]'")

    assert by_id.code == 0 and json.loads(by_id.stdout) == document, by_id.stderr
    assert by_path.code == 0 and json.loads(by_path.stdout) == document, by_path.stderr
    assert one.code == 0 and json.loads(one.stdout) == document["issues"][0], one
    assert with_jq.code == 0 and int(with_jq.stdout) == len(document["issues"]), with_jq
    assert piped.code == 0 and json.loads(piped.stdout) == document["issues"][0], piped


def test_jq_is_in_the_image(sandbox: Box) -> None:
    if sandbox.run("sh", "-c", "command -v jq").code != 0:
        # python:3.11-slim has no jq; CI's Debian base must.
        if os.environ.get("CI"):
            pytest.fail("jq is missing from the image built on CI (add it to the base image)")
        pytest.skip("this base image has no jq")


@pytest.mark.parametrize(
    ("kind", "command"),
    [
        ("object", "mcpsq demo search-issues --query seed-recipe"),  # the preview itself has .truncation
        ("array", "mcpsq demo list-rows --table seed-recipe --raw"),  # the envelope has _meta.truncation
    ],
)
def test_the_seed_jq_recipe_finds_and_reads_the_original_inside_the_container(
    proxy: Box, kind: str, command: str
) -> None:
    """mcp-compressor's shell recipe, verbatim, on what `mcpsq` prints, with the image's own jq."""
    if proxy.sh("command -v jq").code != 0:
        if os.environ.get("CI"):
            pytest.fail("jq is missing from the image built on CI (add it to the base image)")
        pytest.skip("this base image has no jq")
    result = proxy.sh(
        f"cd /tmp && {command} > response-{kind}.json 2>/dev/null && "
        + COMPRESSOR_RECIPE.replace("response.json", f"response-{kind}.json")
    )

    assert result.code == 0, result
    content = json.loads(result.stdout)  # the original's .content (no structuredContent here)
    original = json.loads(content[0]["text"])
    if kind == "object":
        assert len(original["issues"]) == 300
    else:
        assert isinstance(original, list) and len(original) == 500


@pytest.mark.parametrize(
    "ref",
    [
        "../etc/passwd",
        "/recovery/../etc/passwd",
        "/etc/passwd",
        "/proc/self/environ",
    ],
)
def test_recover_refuses_paths_outside_the_mount(proxy: Box, ref: str) -> None:
    result = proxy.run("mcpsq", "recover", ref)

    assert result.code == 2, result
    assert "root:" not in result.stdout and result.stdout == ""
    assert result.stderr.strip(), "a refusal must say why"


def test_recover_refuses_a_planted_symlink(proxy: Box) -> None:
    rid = secrets.token_hex(16)
    link = proxy.recovery / f"mcpsqueeze-{rid}.json"
    link.symlink_to("/etc/passwd")
    dir_rid = secrets.token_hex(16)
    (proxy.recovery / f"mcpsqueeze-{dir_rid}.json").symlink_to("/etc", target_is_directory=True)
    try:
        for ref in (rid, f"/recovery/mcpsqueeze-{rid}.json", dir_rid):
            result = proxy.run("mcpsq", "recover", ref)
            assert result.code == 2, (ref, result)
            assert "root:" not in result.stdout, ref
    finally:
        link.unlink()
        (proxy.recovery / f"mcpsqueeze-{dir_rid}.json").unlink()


def test_per_server_commands_are_on_path_for_the_agent(proxy: Box) -> None:
    result = proxy.run("demo", "echo", "--text", "hello from the container")

    assert result.code == 0, result
    assert "hello from the container" in result.stdout
    piped = proxy.sh("demo search-issues --query piped 2>/dev/null | jq -r '.truncation.response_id'")
    assert piped.code == 0 and re.fullmatch(r"[0-9a-f]{32}\n", piped.stdout), piped


def test_the_cron_script_runs_next_to_the_session(proxy: Box) -> None:
    result = proxy.run("mcpsqueeze-cleanup", "/recovery", "24h", "1G")

    assert result.code == 0, result
    assert (m := LOG_LINE.match(result.stdout.strip())) and m["result"] == "ok", result


@pytest.mark.parametrize("pid1", ["tini", "entrypoint shell"])
def test_a_mounted_config_gets_its_servers_as_commands_and_docker_stop_exits_0_in_time(
    start_box: Callable[..., Box], tmp_path: Path, pid1: str
) -> None:
    """Both ways PID 1 can look: tini (Debian base) or the entrypoint shell (python:3.11-slim base)."""
    config = tmp_path / "servers.json"
    backend = {"command": "python3", "args": ["-m", "mcpsqueeze.demo.server"]}
    config.write_text(json.dumps({"mcpServers": {"issues": backend, "notes": backend}}))
    config.chmod(0o644)
    env = {"MCPSQUEEZE_NO_TINI": "1"} if pid1 != "tini" else {}
    box = start_box(None, name="stopper", mounts={str(config): "/etc/mcpsqueeze/servers.json"}, env=env)
    wait_ready(box)
    init = box.run("cat", "/proc/1/cmdline").stdout.split("\0")
    assert ("tini" in init[0]) == (pid1 == "tini"), init
    listing = box.run("mcpsq")
    assert "issues search-issues" in listing.stdout and "notes echo" in listing.stdout, listing
    assert box.run("sh", "-c", "command -v demo").code != 0, "the image's example server must be gone"
    echoed = box.run("notes", "echo", "--text", "from notes")
    assert echoed.code == 0 and "from notes" in echoed.stdout, echoed
    call = box.run("issues", "search-issues", "--query", "before-stop")
    assert call.code == 0, call

    started = time.monotonic()
    box.raw.stop(timeout=10)
    elapsed = time.monotonic() - started
    box.raw.reload()
    state = box.raw.attrs["State"]

    assert state["ExitCode"] == 0, (state, box.logs())
    assert elapsed < 9.5, f"docker stop took {elapsed:.1f}s: the grace period ran out (SIGKILL)"
    _out, err = box.logs()
    assert err.strip(), "serve prints a summary to stderr on SIGTERM"
    assert not [p for p in box.recovery.iterdir() if p.name.endswith(".tmp")], "a half-written file was left"
    assert len(recovery_files(box.recovery)) == 1
