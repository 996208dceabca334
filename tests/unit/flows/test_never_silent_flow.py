"""Never silent, part 3 (issue 47): a broken setup needs a person at once, and every message
names a way out that works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes import World

DAY = "2026-11-29"


def _sync(world: World, at: str, *extra: str) -> int:
    return world.run("sync", "-q", "--now", f"{DAY}T{at}", *extra).code


def test_a_broken_setup_needs_a_person_from_its_first_run_until_the_next_good_one(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-mcporter"))  # else mcporter is tried (420)
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    typo = tmp_path / "mcporter.jsn"
    assert _sync(world, "10:00", "--mcporter-config", str(typo)) == 78
    status = world.run("status", "--now", f"{DAY}T10:05")
    assert status.code == 4, status.stdout
    line = next(x for x in status.stdout.splitlines() if x.startswith("sync needs a person"))
    assert "setup is broken" in line and "since 2026-11-29 10:00" in line
    assert f"mcporter-config: {typo} does not exist" in line  # doctor's own words
    assert "every store call failed" not in status.stdout  # decision 262: not an outage
    assert "nothing needs a person" not in status.stdout
    probe = world.run("status", "-q", "--now", f"{DAY}T10:05")
    assert probe.code == 4 and f"{typo} does not exist" in probe.stderr
    data = world.json("status", "--now", f"{DAY}T10:05").data
    assert "setup is broken" in data["commands"]["sync"]["alarm"]
    # A second broken run keeps the first one's time; the next good run clears the alarm.
    assert _sync(world, "11:00", "--mcporter-config", str(typo)) == 78
    assert "since 2026-11-29 10:00" in world.run("status", "--now", f"{DAY}T11:05").stdout
    assert _sync(world, "12:00") == 0
    fine = world.run("status", "--now", f"{DAY}T12:05")
    assert fine.code == 0 and "nothing needs a person" in fine.stdout, fine.stdout


def test_status_before_anything_ran_or_was_scheduled_does_not_say_all_is_well(
    world: World,
) -> None:
    """What the README's install block closes with when one of its steps failed."""
    out = world.run("status")
    assert "nothing needs a person" not in out.stdout
    assert "not set up yet" in out.stdout and "memfuse cron --install" in out.stdout
    world.journal(DAY, "## Events\n- met Bob\n")
    assert _sync(world, "10:00") == 0
    assert "nothing needs a person" in world.run("status", "--now", f"{DAY}T10:05").stdout


def _config(tmp_path: Path, servers: dict[str, object]) -> Path:
    path = tmp_path / "mcporter.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_a_mistyped_config_path_is_answered_with_the_file_that_is_there(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-mcporter"))  # else mcporter is tried (420)
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    real = _config(tmp_path, {"agent-memory": {"command": "sh"}})
    typo = tmp_path / "mcporter.jsn"
    out = world.run("sync", "--now", f"{DAY}T10:00", "--mcporter-config", str(typo))
    assert out.code == 78
    assert f"{typo} does not exist; did you mean {real}?" in out.stderr
    assert "mcporter not found" not in out.stderr  # the run never needed mcporter
    assert f"--install-config {typo}" not in out.stderr  # no config written at the typo
    assert world.gateway.calls == []  # no transport was started for nothing
    doctor = world.run("doctor", "--mcporter-config", str(typo))
    assert f"did you mean {real}?" in doctor.stdout
    # Nothing close: writing a config there is the fix.
    far = tmp_path / "elsewhere" / "servers.json"
    doctor = world.run("doctor", "--mcporter-config", str(far))
    assert "did you mean" not in doctor.stdout
    assert f"memfuse doctor --install-config {far}" in doctor.stdout


def test_a_mistyped_server_name_is_answered_with_the_one_meant(
    world: World, tmp_path: Path
) -> None:
    config = _config(tmp_path, {"agent-memory": {"command": "sh"}, "github": {"command": "gh"}})
    out = world.run("doctor", "--mcporter-config", str(config), "--server", "agent-memroy")
    assert "has no server 'agent-memroy'; did you mean 'agent-memory'?" in out.stdout
    assert "--server agent-memory" in out.stdout and "adds it beside" not in out.stdout
    out = world.run("doctor", "--mcporter-config", str(config), "--server", "billing")
    assert "did you mean" not in out.stdout and "adds it beside the others" in out.stdout
    # an agent's own entry not written yet (a newcomer's `cron --check --all-agents` before
    # `--install`): the way out is the install, never the shared database's entry
    out = world.run("doctor", "--mcporter-config", str(config), "--server", "agent-memory-home")
    assert "did you mean" not in out.stdout and "--server agent-memory" not in out.stdout
    assert "`memfuse cron --install --all-agents` writes it from 'agent-memory'" in out.stdout


def test_a_server_script_that_is_not_there_is_fixed_with_the_one_the_user_has(
    world: World, tmp_path: Path
) -> None:
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    world.gateway.down = "failed"
    gone = tmp_path / "old" / "dist" / "mcp" / "server.js"
    config = _config(tmp_path, {"agent-memory": {"command": "sh", "args": [str(gone)]}})
    out = world.run("sync", "--now", f"{DAY}T10:00", "--mcporter-config", str(config))
    assert out.code == 78 and f"its script {gone} does not exist" in out.stderr
    assert f"memfuse doctor --install-config {config} --server-js PATH" in out.stderr


NODE_SAID = """/srv/am/dist/mcp/server.js:3
Error: The module '/srv/am/node_modules/better-sqlite3/build/Release/better_sqlite3.node'
was compiled against a different Node.js version using
NODE_MODULE_VERSION 115. This version of Node.js requires
NODE_MODULE_VERSION 137. Please try re-compiling or re-installing
the module (for instance, using `npm rebuild` or `npm install`).
    at Module._extensions..node (node:internal/modules/cjs/loader:1921:18)
Node.js v24.4.0
"""


def test_a_native_module_built_for_another_node_is_named_with_its_fixes(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from memfuse.settings import Settings
    from memfuse.store.diagnose import node_abi, server_detail, setup_faults
    from memfuse.store.gateway import ServerSpec

    said = node_abi(NODE_SAID)
    assert said is not None and "Node 20" in said and "Node 24" in said
    assert "better_sqlite3.node was built for another Node" in said
    settings = Settings(workspace=tmp_path, now=datetime(2026, 11, 29, tzinfo=UTC))
    detail = server_detail(settings, "closed", asked="status", missing=None, said=said, log=None)
    assert "`npm rebuild better-sqlite3` in /srv/am" in detail
    assert "--server-js PATH` picks a Node that loads it" in detail
    assert node_abi("Error: Cannot find module '/x/server.js'") is None
    # A run that meets it is misconfigured (exit 78), not a store that is down.
    faults = setup_faults(
        settings, ServerSpec("sh", (), {}, None), transport="session", bridge_version=lambda: None,
        last="closed", said=said, log=None, env={},
    )  # fmt: skip
    assert [f.name for f in faults] == ["server"] and "npm rebuild" in faults[0].detail


def _package_with_a_native_module(root: Path) -> tuple[Path, Path]:
    js = root / "am" / "dist" / "mcp" / "server.js"
    js.parent.mkdir(parents=True)
    js.write_text("// the server\n")
    module = root / "am" / "node_modules" / "better-sqlite3" / "build" / "Release"
    module.mkdir(parents=True)
    (module / "better_sqlite3.node").write_bytes(b"\x7fELF")
    return js, module / "better_sqlite3.node"


def _node(folder: Path, status: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    node = folder / "node"
    node.write_text(f"#!/bin/sh\nexit {status}\n")
    node.chmod(0o755)
    return node


def test_the_node_picked_is_one_that_loads_the_servers_native_module(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memfuse.setup.node import pick_node

    js, module = _package_with_a_native_module(tmp_path)
    inside = _node(world.workspace / "bin", 0)  # the agent's: never run
    old, good = _node(tmp_path / "old", 1), _node(tmp_path / "good", 0)
    tried: list[list[str]] = []

    def run(argv: object, *, timeout: float, env: object, cwd: str) -> int:
        tried.append(list(argv))  # type: ignore[call-overload]
        return 0 if tried[-1][0] == str(good) else 1

    relative = "bin"  # the workspace's own bin/, memfuse being run from the workspace
    monkeypatch.chdir(world.workspace)
    path = f"{inside.parent}:{relative}:{old.parent}:{good.parent}"
    choice = pick_node(js, home=tmp_path, workspace=world.workspace, env={"PATH": path}, run=run)
    assert choice.node == str(good) and choice.note and f"first on PATH, {old}" in choice.note
    assert [argv[0] for argv in tried] == [str(old), str(good)]
    assert tried[0][1:] == ["-e", "require(process.argv[1])", str(module)]
    # Through doctor, with real (stand-in) Nodes on PATH.
    config = tmp_path / "mcporter.json"
    out = world.json(
        "doctor", "--install-config", str(config), "--server-js", str(js),
        env={"PATH": f"{old.parent}:{good.parent}:/usr/bin:/bin"},
    )  # fmt: skip
    assert out.code == 0, out.stdout
    assert json.loads(config.read_text())["mcpServers"]["agent-memory"]["command"] == str(good)


def test_ctrl_c_exits_130_as_shells_expect(world: World) -> None:
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")

    def interrupt(_tool: str, _arguments: object) -> None:
        raise KeyboardInterrupt

    world.gateway.hook = interrupt
    out = world.run("sync", "--now", f"{DAY}T10:00")
    assert out.code == 130 and "memfuse sync: interrupted" in out.stderr


def test_ctrl_c_outside_a_run_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    import memfuse.cli

    cli = sys.modules[memfuse.cli.main.__module__]

    def interrupted(**_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "app", interrupted)
    with pytest.raises(SystemExit) as stopped:
        cli.main()
    assert stopped.value.code == 130


def test_serve_says_note_writes_and_its_recall_tool_reads_as_one_sentence() -> None:
    from typer.testing import CliRunner

    from memfuse.cli import app
    from memfuse.commands.serve import RECALL

    top = CliRunner().invoke(app, ["--help"]).stdout
    serve_line = next(line for line in top.splitlines() if line.strip().startswith("serve"))
    assert "note" in serve_line and "writes" in serve_line
    own = CliRunner().invoke(app, ["serve", "--help"]).stdout
    assert "read-only" not in own and "note" in own and "writes" in own
    assert "The answer is The" not in RECALL.description
    assert "`memfuse recall --json`'s envelope is in the result's _meta" in RECALL.description


def test_serve_says_note_takes_no_workspace_lock() -> None:
    """A note appends without the workspace lock (serve/note.py); the help said it took it."""
    from typer.testing import CliRunner

    from memfuse.cli import app

    own = " ".join(CliRunner().invoke(app, ["serve", "--help"]).stdout.split())
    assert "under the workspace lock" not in own and "without the workspace lock" in own


class _Terminal:
    """A stream that says it is a terminal, keeping what is written."""

    def __init__(self) -> None:
        import io

        self.kept = io.StringIO()

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return self.kept.write(text)

    def flush(self) -> None:
        """Nothing is buffered."""


def test_colour_only_for_a_terminal_without_no_color() -> None:
    import io

    from memfuse.run import colour

    terminal = _Terminal()
    assert colour.wanted(terminal, {}) is True  # type: ignore[arg-type]
    assert colour.wanted(terminal, {"NO_COLOR": "1"}) is False  # type: ignore[arg-type]
    assert colour.wanted(terminal, {"TERM": "dumb"}) is False  # type: ignore[arg-type]
    assert colour.wanted(io.StringIO(), {}) is False  # a pipe, a file
    painter = colour.console(terminal)  # type: ignore[arg-type]
    painter.print(colour.painted("FAIL  server    agent-memory did not answer"))
    painter.print(colour.painted("memfuse sync: the store was not reached"))
    painter.print(colour.painted("a line \\x1b[31m made printable stays as it is"))
    shown = terminal.kept.getvalue()
    assert "\x1b[1;31mFAIL\x1b[0m" in shown and "\x1b[1;31mmemfuse sync: \x1b[0m" in shown
    assert "\\x1b[31m made printable" in shown  # the text's own escapes are never passed on


def test_doctors_table_is_in_colour_at_a_terminal_and_plain_in_a_pipe(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memfuse.run import colour

    typo = tmp_path / "mcporter.jsn"
    plain = world.run("doctor", "--mcporter-config", str(typo))
    assert "\x1b[" not in plain.stdout and "FAIL" in plain.stdout
    monkeypatch.setattr(colour, "wanted", lambda _stream, _env=None: True)  # a terminal
    painted = world.run("doctor", "--mcporter-config", str(typo))
    assert "\x1b[1;31mFAIL\x1b[0m" in painted.stdout and "\x1b[32mok\x1b[0m" in painted.stdout
    assert painted.code == plain.code


def _forget(world: World, content: str) -> None:
    """The store loses one memory (its row and its path), as a deleted row would."""
    import sqlite3

    db = sqlite3.connect(world.gateway.db_path)
    try:
        (memory_id,) = db.execute(
            "SELECT id FROM memories WHERE content = ?", (content,)
        ).fetchone()
        db.execute("DELETE FROM paths WHERE memory_id = ?", (memory_id,))
        db.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
        db.commit()
    finally:
        db.close()


def test_tidy_calls_a_lost_memory_whose_bullet_is_gone_stale_and_names_prune(
    world: World,
) -> None:
    world.journal(DAY, "## 09:30\n- Met Bob about the staging deploy\n- Called the landlord\n")
    assert world.run("sync", "--now", f"{DAY}T10:00").code == 0
    world.journal(DAY, "## 09:30\n- Met Bob about the staging deploy\n")  # one bullet deleted
    _forget(world, "Called the landlord")
    out = world.json("tidy", "--now", f"{DAY}T22:00")
    assert out.data["index"]["stale"] == 1 and out.data["index"]["lost"] == 0
    assert "1 stale" in out.data["index_line"] and "sync --prune" in out.data["index_line"]
    assert "re-sent" not in out.data["index_line"].split("stale")[0]
    assert "to be re-sent" not in out.data["index_line"]
    assert out.data["counts"]["index.stale"] == 1
    doctor = world.json("doctor", "--now", f"{DAY}T22:05").data["checks"]
    index = next(c for c in doctor if c["name"] == "index")["detail"]
    assert "0 lost" in index and "1 stale" in index and "sync --prune" in index
    assert "--verify` re-sends" not in index
    # A memory whose bullet is still there is lost, and re-sent, as before.
    _forget(world, "Met Bob about the staging deploy")
    line = world.json("tidy", "--now", f"{DAY}T23:00").data["index_line"]
    assert "1 lost, to be re-sent from the journals" in line


def test_an_emptied_memory_md_is_a_warning_naming_its_last_backup(world: World) -> None:
    memory = world.workspace / "MEMORY.md"
    memory.write_text("# Facts\n- Alice prefers release notes in English\n")
    assert world.run("tidy", "--now", f"{DAY}T03:00").code == 0
    backup = next((world.workspace / "memory" / "archive").glob("MEMORY.md.bak-*"))
    memory.write_text("")
    out = world.run("tidy", "--now", "2026-11-30T03:00")
    assert "warning: MEMORY.md is empty: was it emptied by mistake?" in out.stderr
    assert str(backup) in out.stderr
    assert "MEMORY.md: EMPTY" in out.stdout and "backup for today exists" not in out.stdout
    # No backup of nothing is made: the one with text stays the newest.
    assert sorted(p.name for p in backup.parent.glob("MEMORY.md.bak-*")) == [backup.name]
