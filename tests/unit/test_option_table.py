"""One option table (memfuse.config.OPTIONS): flags, variables, file keys and checks agree."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from memfuse.config import FILE_KEYS, OPTIONS, TRUSTED_KEYS, parse_config
from memfuse.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--jobs", "0"], "--jobs must be a whole number from 1 to 32, got 0"),
        (["--timeout", "0"], "--timeout must be a number greater than 0, got 0.0"),
        (["--timeout", "inf"], "--timeout must be a finite number"),
        (["--transport", "pigeon"], "--transport must be 'auto', 'mcporter' or 'session'"),
        (["--server", ""], "--server must be a non-empty string"),
    ],
)
def test_a_bad_flag_is_refused_like_a_bad_variable(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    result = CliRunner().invoke(app, ["status", "-w", str(tmp_path), *argv])
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_the_same_bad_value_is_refused_from_the_environment(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["status", "-w", str(tmp_path)], env={"MEMFUSE_JOBS": "0"})
    assert result.exit_code == 2
    assert "environment variable MEMFUSE_JOBS must be a whole number from 1 to 32" in result.stderr


def test_every_settings_field_is_in_the_table_or_built_from_it() -> None:
    targets = {o.target.split(".", 1)[0] for o in OPTIONS}
    built = {"now", "session_server", "config_files", "config_notices", "config_refused"}
    tables = {"surface", "rerank", "session"}  # nested tables: their fields are in OPTIONS
    missing = {f.name for f in fields(Settings)} - targets - built - tables
    assert not missing, f"Settings fields no option declares: {missing}"


def test_each_file_key_parses_and_trusted_keys_are_the_tables_own() -> None:
    assert set(FILE_KEYS) == {o.key for o in OPTIONS if o.key}
    assert "transport" in TRUSTED_KEYS and "session.command" in TRUSTED_KEYS
    assert "surface.top_n" not in TRUSTED_KEYS
    values, problems = parse_config("jobs = 2\n[surface]\ntop_n = 3\n", Path("c.toml"))
    assert (values, problems) == ({"jobs": 2, "surface.top_n": 3}, [])


def test_help_and_the_operations_table_show_every_flag_its_variable_and_default() -> None:
    docs = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    help_text = CliRunner().invoke(app, ["sync", "--help"], terminal_width=200).stdout
    for option in (o for o in OPTIONS if o.flag):
        row = next(
            (line for line in docs.splitlines() if line.startswith(f"| `{option.flag[0]}`")), None
        )
        assert row is not None, f"docs/operations.md has no row for {option.flag[0]}"
        assert f"`{option.env}`" in row, row
        if option.shown_default is not None:
            assert f"`{option.shown_default}`" in row, row
        assert option.flag[0] in help_text
        assert option.env is not None
        assert re.search(rf"env\s+{option.env}", help_text), option.env
