"""The conformance suite's client auth scenarios, run against our OAuth backend client.

`conformance client --suite auth --command` starts tests/conformance/oauth_client.py once per scenario
with the suite's protected server URL: `mcpsqueeze auth login` (discovery, registration or a
pre-registered client or a client ID metadata document, PKCE, token endpoint auth) and then
`mcpsqueeze wrap -- URL` calling the server with the token (authorizing in place, step-up included,
where the server asks only after initialize). All 14 scenarios of 0.1.16's auth suite must pass, with no
warnings; the suite runs them in parallel (about 40 s here).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).with_name("oauth_client.py")
sys.path.insert(0, str(Path(__file__).parent))
from test_conformance_backend import PATHS  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (
            Path(PATHS.get("NODE22", "/nonexistent")).is_file()
            and Path(PATHS.get("CONFORMANCE_JS", "/x")).is_file()
        ),
        reason="run scripts/install-test-deps.sh first",
    ),
]


AUTH_SUITE = {
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
}


def test_our_oauth_backend_client_passes_every_client_auth_scenario(tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [
            PATHS["NODE22"],
            PATHS["CONFORMANCE_JS"],
            "client",
            "--command",
            f"{sys.executable} {CLIENT}",
            "--suite",
            "auth",
            "--timeout",
            "120000",
            "--verbose",
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    out = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    summary = out[out.rfind("=== SUITE SUMMARY ===") :]
    rows = {name: mark for mark, name in re.findall(r"^([✓✗]) (auth/\S+): ", summary, re.MULTILINE)}
    assert set(rows) == AUTH_SUITE, summary or out[-3000:]
    assert {name for name, mark in rows.items() if mark != "✓"} == set(), summary
    assert done.returncode == 0, summary
