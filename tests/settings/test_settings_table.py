"""The one table of settings: every knob declared once (a `knob(...)` field of Policy or Settings), and
every door derived from it: flags, variables, [defaults] and [policies] keys, library keywords, the
`config` printout. These pin the derivation, so a new row reaches every door or this fails."""

from __future__ import annotations

import dataclasses

import click

from mcpsqueeze.cli import main
from mcpsqueeze.settings import DEFAULT_KEYS, Policy, Settings, Size
from mcpsqueeze.settings._file import POLICY_KEYS
from mcpsqueeze.settings._table import KNOBS, POLICY_KNOBS, library_defaults

STRUCTURAL = {"target", "policy", "policies"}  # not knobs: what a session is made of


def test_every_policy_and_settings_field_is_one_row() -> None:
    fields = [f.name for f in dataclasses.fields(Policy)] + [
        f.name for f in dataclasses.fields(Settings) if f.name not in STRUCTURAL
    ]
    assert [row.name for row in KNOBS] == fields
    assert [row.name for row in POLICY_KNOBS] == [f.name for f in dataclasses.fields(Policy)]


def test_flags_and_variables_are_unique_and_named_after_the_row() -> None:
    flags = [row.flag_name for row in KNOBS if row.flag_name]
    envs = [row.env_name for row in KNOBS if row.env_name and row.flag_name]
    assert len(flags) == len(set(flags)) and len(envs) == len(set(envs))
    # variables other parts read with another meaning are never a knob's
    assert not {"MCPSQUEEZE_TIMEOUT", "MCPSQUEEZE_SOCKET", "MCPSQUEEZE_URL", "MCPSQUEEZE_CONFIG"} & set(envs)
    for row in KNOBS:
        if row.flag_name and row.env_name and row.env in ("",):
            assert row.env_name == "MCPSQUEEZE_" + row.name.upper()


def test_defaults_pass_their_own_check() -> None:
    for row in KNOBS:
        for value in (row.default, row.library_default()):
            if value is not None:
                assert row.kind.check(value) == value, row.name


def test_config_keys_and_policy_keys_come_from_the_table() -> None:
    assert set(DEFAULT_KEYS) == {row.name for row in KNOBS if row.config}
    assert set(POLICY_KEYS) == {row.name for row in POLICY_KNOBS}


def test_each_command_has_an_option_per_row_of_its_doors() -> None:
    for command in ("wrap", "serve", "config"):
        names = {p.name for p in main.commands[command].params if isinstance(p, click.Option)}
        wanted = {row.name for row in KNOBS if command in row.doors and row.flag_name}
        assert wanted <= names, (command, wanted - names)


def test_library_defaults_differ_only_where_a_row_says_so() -> None:
    squeezer = library_defaults("squeezer")
    assert squeezer["recovery"] == "memory" and squeezer["cache_ttl"] is None
    assert (squeezer["cache_entries"], squeezer["cache_bytes"]) == (128, 64 * 1024**2)
    assert "timeout" not in squeezer and library_defaults("client")["timeout"] is None
    assert squeezer["budget"] == Policy().budget


def markdown_table() -> str:
    """The table as docs/config.md shows it (its test keeps the two the same)."""
    lines = [
        "| setting | flag | variable | `[defaults]` | per tool | library keyword | default (library) |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in KNOBS:
        flag = ", ".join(n for n in (row.short, row.flag_name, row.alias) if n)
        env = row.env_name if row.flag_name else None
        library = [door for door in ("squeezer", "client") if door in row.doors]
        default = row.default_shown()
        if row.name == "recovery_dir":
            default = "the user cache dir's `mcpsqueeze/recovery`"
        elif library and row.library_default() != row.default:
            value = row.library_default()
            shown = f"{value >> 20}M" if isinstance(row.kind, Size) else row.kind.show(value)
            default += f" ({shown})"
        cells = [
            f"`{row.name}`",
            f"`{flag}`" if flag else "",
            f"`{env}`" if env else "",
            "yes" if row.config else "",
            "yes" if row in POLICY_KNOBS else "",
            ", ".join(library),
            default.replace("|", "\\|"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def test_the_docs_show_the_table_as_it_is() -> None:
    from rawclient import ROOT

    doc = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    start = doc.index("<!-- settings-table")
    shown = doc[doc.index("\n", start) + 1 : doc.index("<!-- /settings-table -->")]
    assert shown == markdown_table(), "docs/config.md's table is out of step with the rows"


def test_serve_and_the_client_take_tool_filters_from_the_rows() -> None:
    import sys

    from mcpsqueeze import Client, UsageError

    client = Client(
        {"x": {"command": sys.executable}}, config=False, include_tools="a*, x:b", exclude_tools=["c"]
    )
    assert (client.settings.include_tools, client.settings.exclude_tools) == (("a*", "x:b"), ("c",))
    client.close()
    import pytest

    with pytest.raises(UsageError, match="include_tools must be comma-separated globs"):
        Client({"x": {"command": sys.executable}}, config=False, include_tools=3)
    names = {p.name: p for p in main.commands["serve"].params if isinstance(p, click.Option)}
    assert names["include_tools"].envvar == "MCPSQUEEZE_INCLUDE_TOOLS"
