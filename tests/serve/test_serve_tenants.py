"""serve's TCP API with a token file naming tenants and a real Redis store: one tenant never sees another's."""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path

from serve_api import api, running_serve, write_token

from realservers import needs_redis, redis_server

pytestmark = needs_redis

BACKEND = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "pages_backend.py")]


def test_serve_keeps_each_named_tenants_originals_and_dedup_index_apart(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir(mode=0o700)
    alice, bob = secrets.token_hex(32), secrets.token_hex(32)
    tokens = secret / "tokens"
    write_token(tokens, f"alice:{alice}\nbob:{bob}\n")
    with redis_server(tmp_path) as redis, running_serve(
        "--recovery-dir", str(tmp_path / "rec"), "--budget", "2000", "--recovery-url", redis.url,
        "--listen", "127.0.0.1:0", "--token-file", str(tokens), "-n", "pages", "--", *BACKEND,
    ) as url:  # fmt: skip
        call = {"server": "pages", "tool": "page", "arguments": {"key": "k", "size": 6000}}
        status, first = api(url, alice, "/v1/call", call)
        assert status == 200 and first["action"] == "shrink", first
        rid = first["response_id"]
        status, again = api(url, bob, "/v1/call", call)
        assert status == 200 and again["action"] == "shrink"  # not deduplicated against alice's
        status, mine = api(url, alice, f"/v1/recover/{rid}")
        assert status == 200
        assert mine["result"]["content"][0]["text"].startswith('[{"key": "k"')
        status, theirs = api(url, bob, f"/v1/recover/{rid}")
        assert status == 404 and '"key": "k"' not in json.dumps(theirs)
        status, repeat = api(url, alice, "/v1/call", call)
        # The shell door never deduplicates (stdout must carry data); the dedup index's tenant
        # isolation is tested through wrap (tests/proxy/test_wrap_replicas.py) and the Redis store.
        assert repeat["action"] == "shrink" and repeat["response_id"] != rid
