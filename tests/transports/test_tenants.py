"""Tenants: who a caller is (the bearer token's principal, or the configured tenant), from file to request."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import pytest

from mcpsqueeze._errors import UsageError
from mcpsqueeze.accounting._stats import Accountant
from mcpsqueeze.core._services import SessionServices, for_caller
from mcpsqueeze.core._stages import Workers
from mcpsqueeze.recovery import MemoryCache, RecoveryStore
from mcpsqueeze.settings._file import ConfigError, parse_config_text
from mcpsqueeze.transports._bearer import PRINCIPAL_KEY, bearer_guard, load_tokens, token_principal


def _token_file(tmp_path: Path, text: str) -> Path:
    directory = tmp_path / "secret"
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / "tokens"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, text.encode())
    os.close(fd)
    return path


def test_a_file_of_tenant_token_lines_gives_each_token_its_tenant(tmp_path: Path) -> None:
    a, b = secrets.token_hex(32), secrets.token_hex(32)
    tokens = load_tokens(_token_file(tmp_path, f"# agents\nalice:{a}\n\nbob@corp:{b}\n"))
    assert tokens.named
    assert dict(tokens.principals) == {a.encode(): "alice", b.encode(): "bob@corp"}


def test_a_plain_token_stands_for_a_principal_derived_from_its_hash_never_the_token(tmp_path: Path) -> None:
    token = secrets.token_hex(32)
    tokens = load_tokens(_token_file(tmp_path, token + "\n"))
    assert not tokens.named
    (principal,) = tokens.principals.values()
    assert principal == token_principal(token.encode()) and token not in principal


def test_a_missing_token_file_is_created_with_one_plain_token(tmp_path: Path) -> None:
    path = tmp_path / "new" / "token"
    tokens = load_tokens(path)
    assert not tokens.named and len(tokens.principals) == 1
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"alice:{'a' * 20}\nbob:{'b' * 64}\n", "TENANT:TOKEN"),
        (f"al ice:{'a' * 64}\n", "TENANT:TOKEN"),
        (f"alice:{'a' * 64}\nbob:{'a' * 64}\n", "two tenants"),
    ],
)
def test_a_malformed_token_file_is_refused_saying_how_to_fix_it(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        load_tokens(_token_file(tmp_path, text))


async def _request(app: Any, token: str | None) -> int:
    status = 0

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
    await app({"type": "http", "headers": headers}, receive, send)
    return status


@pytest.mark.anyio
async def test_the_bearer_guard_hands_the_app_the_callers_principal(tmp_path: Path) -> None:
    a, b = secrets.token_hex(32), secrets.token_hex(32)
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope[PRINCIPAL_KEY])
        await send({"type": "http.response.start", "status": 200, "headers": []})

    guarded = bearer_guard(app, load_tokens(_token_file(tmp_path, f"alice:{a}\nbob:{b}\n")))
    assert await _request(guarded, b) == 200
    assert await _request(guarded, a) == 200
    assert await _request(guarded, "x" * 64) == 401
    assert await _request(guarded, None) == 401
    assert seen == ["bob", "alice"]


def _services(tenant: str | None) -> SessionServices:
    store = RecoveryStore(MemoryCache(), None).scoped(tenant or "default")
    return SessionServices(Accountant(None), store, Workers(1), "backend")


def test_a_named_tenant_wins_then_the_configured_tenant_then_the_plain_tokens_principal() -> None:
    def tenant(services: SessionServices) -> str:
        assert services.store is not None
        return services.store.tenant

    assert tenant(for_caller(_services("acme"), "alice", named=True)) == "alice"
    assert tenant(for_caller(_services("acme"), "token-abc", named=False)) == "acme"
    assert tenant(for_caller(_services(None), "token-abc", named=False)) == "token-abc"
    assert tenant(for_caller(_services(None), None, named=False)) == "default"


def test_the_config_file_takes_a_recovery_url_and_a_tenant_and_refuses_bad_ones() -> None:
    config = parse_config_text('[defaults]\nrecovery_url = "redis://127.0.0.1:6379/0"\ntenant = "acme"\n')
    assert dict(config.defaults) == {"recovery_url": "redis://127.0.0.1:6379/0", "tenant": "acme"}
    with pytest.raises(ConfigError, match=r"config:2: recovery_url .* Redis URL"):
        parse_config_text('[defaults]\nrecovery_url = "http://x"\n')
    with pytest.raises(ConfigError, match="tenant"):
        parse_config_text('[defaults]\ntenant = "a b"\n')


def test_config_prints_the_recovery_url_without_its_password(tmp_path: Path) -> None:
    from memwrap import run_cli

    config = tmp_path / "config.toml"
    config.write_text('[defaults]\nrecovery_url = "redis://:hunter2secret@127.0.0.1:6379/0"\n')
    done = run_cli("config", "--config", str(config), "--", "x")
    assert done.returncode == 0, done.stderr
    assert "recovery_url" in done.stdout and "redis://:***@127.0.0.1:6379/0" in done.stdout
    assert "hunter2secret" not in done.stdout
