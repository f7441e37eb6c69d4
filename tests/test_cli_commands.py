"""`kubeledger --help`: the everyday commands apart from the developers' tools, and a command
whose module cannot be imported is an error naming it, not a command missing from the list."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from kubeledger import cli


def test_help_lists_everyday_commands_apart_from_developer_ones():
    result = CliRunner().invoke(cli.main, ["--help"])
    assert result.exit_code == 0, result.output
    text = result.output
    everyday, developer = text.index("Everyday commands:"), text.index("Developer commands:")
    assert everyday < text.index("Try it:") < developer
    sections = {
        "everyday": text[everyday : text.index("Try it:")],
        "developer": text[developer:],
    }
    for name in ("load", "build", "close", "bill", "explain", "correct", "verify", "report"):
        assert f"\n  {name} " in sections["everyday"], name
    for name in ("generate", "bench", "spark"):
        assert f"\n  {name} " in sections["developer"], name
        assert f"\n  {name} " not in sections["everyday"], name
    assert "Other commands" not in text


def test_a_command_that_cannot_be_imported_is_an_error(monkeypatch):
    monkeypatch.setattr(
        cli,
        "COMMAND_MODULES",
        (*cli.COMMAND_MODULES, ("kubeledger.no_such_feature", ("ghost",))),
    )
    with pytest.raises(cli.CommandImportError, match="the ghost command.s. cannot be loaded"):
        cli.register_commands(click.Group())


def test_a_module_without_its_command_is_an_error(monkeypatch):
    monkeypatch.setattr(cli, "COMMAND_MODULES", (("kubeledger.report.commands", ("nope",)),))
    with pytest.raises(cli.CommandImportError, match="defines no command 'nope'"):
        cli.register_commands(click.Group())
