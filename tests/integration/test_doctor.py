from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import StoreServer
from tests.fakes import state_of

pytestmark = pytest.mark.integration
SECRET = "sk-test-DO-NOT-LEAK-0123456789"


def test_doctor_json_reports_every_check_ok(store: StoreServer, workspace: Path) -> None:
    (workspace / "memory" / "2026-02-21.md").write_text("## 22:00\n- Wrote the release notes\n")
    result = CliRunner().invoke(
        app, ["doctor", "--workspace", str(workspace), *store.cli_args("mcporter"), "--json"]
    )
    envelope = json.loads(result.stdout)
    assert result.exit_code == 0, result.stdout
    assert envelope["command"] == "doctor" and envelope["status"] == "ok"
    assert {c["name"]: c["ok"] for c in envelope["data"]["checks"]} == {
        "workspace": True, "journals": True, "config": True, "mcporter-config": True,
        "transport": True, "mcporter": True,
        "generation": True,
        "server": True, "tools": True, "reranker": True, "meaning": True,
    }  # fmt: skip


def test_doctor_without_mcporter_exits_nonzero_in_one_line(workspace: Path) -> None:
    """With mcporter chosen, its absence is the FAIL; before setup, under the default
    transport, what leads is agent-memory and its entry (issue 58)."""
    doctor = ["doctor", "-w", str(workspace), "--mcporter", "/nope/mcporter", "-q"]
    result = CliRunner().invoke(app, [*doctor, "--transport", "mcporter"])
    assert result.exit_code == 1
    assert result.stderr.strip().count("\n") == 0
    assert "mcporter not found" in result.stderr
    default = CliRunner().invoke(app, doctor)
    assert default.exit_code == 1 and default.stderr.strip().count("\n") == 0
    assert default.stderr.startswith("memfuse doctor: critical check(s) failed: agent-memory:")
    assert "mcporter not found" not in default.stderr


def test_no_api_key_in_doctor_output_or_log(
    store: StoreServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_MEMORY_RERANK_PROVIDER", "openai")
    monkeypatch.setenv("AGENT_MEMORY_RERANK_API_KEY", SECRET)
    for extra in (["--json"], [], ["-v"]):
        result = CliRunner().invoke(
            app, ["doctor", "-w", str(workspace), *store.cli_args(), *extra]
        )
        assert SECRET not in result.stdout + result.stderr
        assert "reranker" in result.stdout
    log = (state_of(workspace) / "memfuse.log").read_text()
    assert "doctor" in log and SECRET not in log
    assert "status via session: ok in" in log  # -v: one debug line per store call


def test_a_server_that_will_not_start_shows_its_own_error(
    store: StoreServer, workspace: Path
) -> None:
    """A database folder that does not exist: before, `did not open: Connection closed`, the
    cause only in a log file nobody was told about; now the server's last words are in the
    FAIL line."""
    store.write_config(AGENT_MEMORY_DB="/nonexistent/folder/agent-memory.db")
    result = CliRunner().invoke(
        app, ["doctor", "-w", str(workspace), *store.cli_args("session"), "--json"]
    )
    assert result.exit_code == 1
    server = next(c for c in json.loads(result.stdout)["data"]["checks"] if c["name"] == "server")
    assert not server["ok"]
    assert "the server said:" in server["detail"]
    assert "unable to open database file" in server["detail"]
