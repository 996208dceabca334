from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse import __version__
from memfuse.cli import app


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"memfuse {__version__}"


def test_help_lists_the_subcommands() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for name in ("sync", "surface", "tidy", "rerank-test", "doctor", "classify"):
        assert f" {name} " in result.stdout, name


def test_common_options_are_accepted_after_the_subcommand(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["doctor", "--workspace", str(tmp_path), "--json", "-q", "--mcporter", "/x"]
    )
    doc = json.loads(result.stdout)  # --json: one document; -q adds no line to it
    checks = {c["name"]: c["detail"] for c in doc["data"]["checks"]}
    assert doc["command"] == "doctor"
    assert checks["workspace"] == str(tmp_path)  # --workspace taken
    assert "'/x'" in checks["mcporter"]  # --mcporter taken


def test_malformed_user_config_file_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    user = tmp_path / "xdg" / "memfuse" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("jobs = 'lots'\n")
    result = CliRunner().invoke(
        app, ["classify", "-w", str(tmp_path), "x"], env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    )
    assert result.exit_code == 2
    assert str(user) in result.stderr and "'jobs'" in result.stderr


def test_a_refused_workspace_key_is_one_warning_and_strict_exits_3(world: Any) -> None:
    (world.workspace / ".memfuse").mkdir()
    (world.workspace / ".memfuse" / "config.toml").write_text('mcporter = "/tmp/x.sh"\n')
    result = world.run("classify", "记住")
    assert result.code == 0
    assert result.stderr.count("not applied") == 1 and "mcporter" in result.stderr
    assert world.run("sync", "--strict").code == 3  # the store answered; the refusal counts


def test_shell_completion_completes_subcommands() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {
        **os.environ,
        "_MEMFUSE_COMPLETE": "complete_bash",
        "COMP_WORDS": "memfuse su",
        "COMP_CWORD": "1",
    }
    done = subprocess.run(
        [str(Path(sys.executable).parent / "memfuse")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.split() == ["surface"]


def test_a_usage_error_under_json_still_prints_an_envelope(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A caller that parses stdout always gets one: exit 2, the error, `usage` true."""
    import json

    from memfuse.cli import main

    monkeypatch.setattr("sys.argv", ["memfuse", "sync", "--days", "soon", "--json"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    envelope = json.loads(out)
    assert envelope["schema"] == 2 and envelope["command"] == "sync"
    assert envelope["status"] == "failed" and envelope["exit_code"] == 2
    assert "--days" in envelope["data"]["error"] and envelope["data"]["usage"] is True
    assert "--days" in err  # and the message for people, as before
    monkeypatch.setattr("sys.argv", ["memfuse", "sync", "--days", "soon"])
    with pytest.raises(SystemExit):
        main()
    out, _err = capsys.readouterr()
    assert out == ""  # without --json, stdout stays empty
