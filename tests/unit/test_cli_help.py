"""The help a newcomer reads first says whole sentences, and the truth."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from memfuse.cli import app


def test_the_command_list_cuts_no_description_at_80_columns() -> None:
    out = CliRunner().invoke(app, ["--help"], terminal_width=80).stdout
    listed = [line for line in out.split("Commands:")[1].splitlines() if line.strip()]
    assert len(listed) >= 11
    for line in listed:
        assert not line.rstrip().endswith("..."), line
        assert re.fullmatch(r"  [a-z-]+ +\S.*\.", line), line  # one line, a whole sentence


def test_sync_help_says_what_a_plain_sync_reads() -> None:
    out = CliRunner().invoke(app, ["sync", "--help"], terminal_width=100).stdout
    said = " ".join(out.split())
    assert "today's journal" not in said
    assert "every journal that changed since the last sync, whatever its day" in said


def test_no_help_sends_the_reader_to_a_state_folder_inside_the_workspace() -> None:
    """memfuse's state lives in the user's state folder (`--state-dir`), not the workspace's
    `.memfuse/`, which holds only the workspace's own config.toml (issue 59)."""
    listing = CliRunner().invoke(app, ["--help"], terminal_width=200).stdout
    commands = re.findall(r"^  ([a-z-]+) ", listing.split("Commands:")[1], re.MULTILINE)
    assert "status" in commands
    for command in commands:
        out = CliRunner().invoke(app, [command, "--help"], terminal_width=200).stdout
        said = " ".join(out.split())
        assert re.search(r"\.memfuse/(?!config\.toml)", said) is None, command
