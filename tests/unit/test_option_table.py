"""One option table (memfuse.config.OPTIONS): flags, variables, file keys and checks agree."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from memfuse.config import (
    FILE_KEYS,
    OPTIONS,
    TRUSTED_KEYS,
    Option,
    defaults,
    load_settings,
    parse_config,
)
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
    result = CliRunner().invoke(app, ["sync", "--dry-run", "-w", str(tmp_path), *argv])
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


LIMITS = [o for o in OPTIONS if o.limit]


def _toml(option: Option, value: object) -> str:
    section, key = option.key or ("", "")
    return f"[{section}]\n{key} = {value!r}\n" if section else f"{key} = {value!r}\n"


def _setting(settings: Settings, option: Option) -> object:
    value: object = settings
    for part in option.target.split("."):
        value = getattr(value, {"session": "session_server"}.get(part, part))
    return value


@pytest.mark.parametrize("option", LIMITS, ids=[o.dotted for o in LIMITS])
def test_the_workspace_config_can_lower_a_limit_but_never_raise_it(
    tmp_path: Path, option: Option
) -> None:
    """Every limit of the option table (time, workers, bytes, lines): the agent-written file may
    go below the default, never above (issue 29: `jobs = 100000` started 400 processes)."""
    assert not option.trusted  # a limit the workspace may not touch at all is a trusted key
    default = defaults()[option.target]
    higher, lower = (
        default * 2 + 1,
        max(default // 2 if isinstance(default, int) else default / 2, 1),
    )
    ws = tmp_path / "ws"
    (ws / ".memfuse").mkdir(parents=True)
    env = {"HOME": str(tmp_path)}
    (ws / ".memfuse" / "config.toml").write_text(_toml(option, higher))
    raised = load_settings({"workspace": str(ws)}, env)
    assert _setting(raised, option) == default
    assert option.dotted in raised.config_refused
    assert any("may only lower a limit" in n for n in raised.config_notices)
    (ws / ".memfuse" / "config.toml").write_text(_toml(option, lower))
    lowered = load_settings({"workspace": str(ws)}, env)
    assert _setting(lowered, option) == lower
    assert lowered.config_notices == ()


def test_every_budget_of_what_a_run_spends_or_shows_is_a_limit() -> None:
    """The keys whose raising costs time, memory or the agent's context are all marked."""
    spending = {"timeout", "jobs", "max_file_mib", "rerank.timeout", "memory_md_max_lines"} | {
        o.target
        for o in OPTIONS
        if o.target.startswith("surface.") and "similarity" not in o.target
        if o.target != "surface.query"  # words, not a spend
    }
    assert spending == {o.target for o in LIMITS}


def test_a_keyword_list_cannot_grow_past_its_bound() -> None:
    """90 000 keywords made the regular expression's compile take 23 s (issue 29)."""
    text = "[classify]\nknowledge = [" + ", ".join(f'"k{n}"' for n in range(501)) + "]\n"
    _values, problems = parse_config(text, Path("config.toml"))
    assert problems and "at most 500 keywords" in problems[0]


def test_a_command_names_the_common_options_it_takes_and_a_misspelt_one_is_refused() -> None:
    """Each command's decorator names the shared options it takes (not a table keyed by the
    function's name): status takes no store option, sync every lifecycle one."""
    from memfuse.cli.app import with_common_options

    status = CliRunner().invoke(app, ["status", "--help"], env={"COLUMNS": "200"}).stdout
    sync = CliRunner().invoke(app, ["sync", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--mcporter" not in status and "--jobs" not in status and "--json" in status
    assert all(f in sync for f in ("--mcporter", "--jobs", "--strict", "--wait", "--json"))
    with pytest.raises(ValueError, match="no common option"):
        with_common_options("jbos")
