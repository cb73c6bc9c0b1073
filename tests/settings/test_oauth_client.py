"""How mcpsqueeze identifies itself to a URL backend's authorization server (oauth.OAuthClient), and the
oauth_* keys of a servers-config URL entry. Pure apart from a secret file in tmp_path; the flows
themselves run against real authorization servers in tests/proxy/test_wrap_oauth.py and
tests/conformance/test_conformance_oauth_client.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsqueeze import UsageError
from mcpsqueeze.cli._main import main
from mcpsqueeze.settings import OAuthClient, parse_config
from mcpsqueeze.transports._oauth import _token_auth_method


def _secret(tmp_path: Path, mode: int) -> Path:
    path = tmp_path / "secret"
    path.write_text("s3cret\n")
    os.chmod(path, mode)
    return path


def test_a_pre_registered_secret_is_read_from_an_owner_only_file_and_stripped(tmp_path: Path) -> None:
    client = OAuthClient(client_id="app", client_secret_file=_secret(tmp_path, 0o600))
    assert client.client_secret() == "s3cret"


def test_a_secret_file_others_can_read_is_refused_with_the_chmod_to_run(tmp_path: Path) -> None:
    client = OAuthClient(client_id="app", client_secret_file=_secret(tmp_path, 0o644))
    with pytest.raises(UsageError, match="chmod 600"):
        client.client_secret()


def test_a_secret_without_a_client_id_is_refused() -> None:
    with pytest.raises(UsageError, match="needs the client id"):
        OAuthClient(client_secret_file=Path("/x"))


@pytest.mark.parametrize("url", ["http://example.test/client.json", "https://example.test/", "client.json"])
def test_a_client_metadata_url_must_be_https_with_a_path(url: str) -> None:
    with pytest.raises(UsageError, match="https:// URL with a path"):
        OAuthClient(client_metadata_url=url)


@pytest.mark.parametrize(
    ("supported", "secret", "method"),
    [
        (None, "s", "client_secret_basic"),
        (["client_secret_post"], "s", "client_secret_post"),
        (["client_secret_post", "client_secret_basic"], "s", "client_secret_basic"),
        (["client_secret_basic"], None, "none"),
    ],
)
def test_a_pre_registered_client_authenticates_as_the_server_supports(
    supported: list[str] | None, secret: str | None, method: str
) -> None:
    assert _token_auth_method(supported, secret) == method


def test_a_url_entry_takes_oauth_keys_into_its_client() -> None:
    entry = {
        "url": "https://example.test/mcp",
        "oauth_client_id": "app",
        "oauth_client_secret_file": "~/secret",
        "oauth_client_metadata_url": "https://example.test/client.json",
        "oauth_login": "prompt",
    }
    (spec,) = parse_config(json.dumps({"mcpServers": {"remote": entry}}))
    assert spec.oauth == OAuthClient(
        client_id="app",
        client_secret_file=Path("~/secret").expanduser(),
        client_metadata_url="https://example.test/client.json",
        login="prompt",
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"url": "https://e.test/mcp", "oauth_client_key": "x"}, "unknown key 'oauth_client_key'"),
        ({"url": "https://e.test/mcp", "oauth_login": "always"}, "OAuth login must be one of"),
        ({"command": "node", "oauth_client_id": "app"}, "oauth_\\* keys are for URL backends"),
    ],
)
def test_bad_oauth_keys_are_refused_naming_the_server(entry: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message) as caught:
        parse_config(json.dumps({"mcpServers": {"remote": entry}}))
    assert "server 'remote'" in str(caught.value)


def test_wrap_refuses_oauth_flags_for_a_command_backend() -> None:
    result = CliRunner().invoke(main, ["wrap", "--oauth-client-id", "app", "--", "python", "-V"])
    assert result.exit_code == 2 and "for a URL backend" in result.output


def test_wrap_refuses_a_secret_file_others_can_read_before_starting(tmp_path: Path) -> None:
    secret = _secret(tmp_path, 0o644)
    argv = [
        "wrap",
        "--oauth-client-id",
        "app",
        "--oauth-client-secret-file",
        str(secret),
        "--",
        "https://e.test/mcp",
    ]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2 and "chmod 600" in result.output
