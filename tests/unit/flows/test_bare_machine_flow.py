"""A new user's first hour on a bare machine (issue 40): every mistake is named with its fix,
and nothing the user wrote is lost."""

from __future__ import annotations

from pathlib import Path

from tests.fakes import World


def _user_config(text: str) -> Path:
    import os

    path = Path(os.environ["HOME"]) / ".config" / "memfuse" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_an_unknown_config_key_is_answered_with_the_key_it_was_meant_to_be(world: World) -> None:
    path = _user_config("[surface]\nwindows_days = 3\n")
    out = world.run("status")
    assert out.code == 2  # a usage error
    assert f"config file {path}: unknown key 'surface.windows_days'" in out.stderr
    assert "did you mean 'surface.window_days'?" in out.stderr
    _user_config("windows_days = 3\n")  # the right name, outside its table
    assert "did you mean 'surface.window_days'?" in world.run("status").stderr
    _user_config("[surface]\nbogus = 1\n")  # nothing close: no guess
    assert "did you mean" not in world.run("status").stderr


def test_the_session_servers_arguments_are_masked_like_its_environment(world: World) -> None:
    _user_config(
        '[session]\ncommand = "node"\n'
        'args = ["server.js", "--api-key=sk-live-abcdefgh12345678", "--token", "tok-9876543210",'
        ' "postgres://mem:pw@db.local/mem"]\n'
    )
    for argv in (["doctor", "--json", "--show-config"], ["doctor", "--show-config"]):
        out = world.run(*argv)
        text = out.stdout + out.stderr
        for secret in ("sk-live-abcdefgh12345678", "tok-9876543210", "mem:pw@"):
            assert secret not in text, (argv, secret)
        assert "server.js" in text and "db.local/mem" in text  # what is not secret is shown


def test_a_workspace_that_is_a_journals_folder_is_refused_naming_the_one_meant(
    world: World,
) -> None:
    world.journal("2026-12-01", "## Events\n- the billing rollout\n")
    from typer.testing import CliRunner

    from memfuse.cli import app

    inner = world.workspace / "memory"
    for argv in (["sync", "-w", str(inner)], ["doctor", "-w", str(inner)]):
        result = CliRunner().invoke(app, argv, obj=world.seams)
        assert result.exit_code == 2, result.stderr
        assert f"give -w {world.workspace}" in result.stderr
    assert not (inner / "memory").exists() and world.gateway.calls == []
    from tests.fakes import state_of

    assert not state_of(inner).exists()  # no second state folder
    # A workspace that happens to be named memory, holding its own journals, is one.
    named = world.workspace.parent / "agents" / "memory"
    (named / "memory").mkdir(parents=True)
    assert CliRunner().invoke(app, ["status", "-w", str(named)], obj=world.seams).exit_code == 0


DAY = "2026-11-29"


def _sync(world: World, at: str, *extra: str) -> tuple[int, str]:
    out = world.run("sync", "-q", "--now", f"{DAY}T{at}", *extra)
    return out.code, out.stderr


def test_a_run_whose_own_setup_is_wrong_names_the_cause_and_raises_no_store_alarm(
    world: World, tmp_path: Path
) -> None:
    """The causes doctor names — a mistyped --mcporter-config, a server script that is not
    there — are the run's error (exit 78), and such runs never make the store-down alarm."""
    import json

    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    world.gateway.down = "failed"
    typo = tmp_path / "mcporter.jsn"
    code, stderr = _sync(world, "10:00", "--mcporter-config", str(typo))
    assert code == 78, stderr
    assert f"mcporter-config: {typo} does not exist" in stderr
    doctor = world.run("doctor", "--mcporter-config", str(typo))
    assert f"{typo} does not exist" in doctor.stdout  # the same words doctor says
    config = tmp_path / "mcporter.json"
    missing = tmp_path / "gone" / "dist" / "mcp" / "server.js"
    entry = {"command": "sh", "args": [str(missing)]}
    config.write_text(json.dumps({"mcpServers": {"agent-memory": entry}}))
    for at in ("11:00", "12:00", "13:00"):
        code, stderr = _sync(world, at, "--mcporter-config", str(config))
        assert code == 78, stderr
        assert f"its script {missing} does not exist" in stderr
        assert "needs a person" not in stderr
    status = world.run("status", "--now", f"{DAY}T13:05")
    # Four mistaken runs: a broken setup that needs a person (issue 47), not a store outage.
    assert status.code == 4, status.stdout
    assert "setup is broken" in status.stdout and "every store call failed" not in status.stdout
    assert "store misconfigured" in status.stdout
    # A store that is set up and down still escalates, mistaken runs in between or not.
    config.write_text(json.dumps({"mcpServers": {"agent-memory": {"command": "sh"}}}))
    assert _sync(world, "14:00", "--mcporter-config", str(config))[0] == 0
    assert _sync(world, "15:00", "--mcporter-config", str(typo))[0] == 78
    assert _sync(world, "16:00", "--mcporter-config", str(config))[0] == 0
    code, stderr = _sync(world, "17:00", "--mcporter-config", str(config))
    assert code == 4 and "every store call failed in the last 3 runs" in stderr


def test_doctor_on_a_machine_without_agent_memory_says_so_and_shows_the_server_js_route(
    world: World,
) -> None:
    import os

    out = world.json("doctor")
    rows = {c["name"]: c for c in out.data["checks"]}
    row = rows["agent-memory"]
    assert not row["ok"] and not row["critical"]
    assert "agent-memory is not installed here" in row["detail"]
    assert "E404" in row["detail"]  # the registry's answer on most machines today
    assert "--install-config ~/.mcporter/mcporter.json --server-js PATH" in row["detail"]
    # writing a file of the user's own, the way out names that file (a newcomer was told to
    # write servers.json, then to write ~/.mcporter/mcporter.json instead)
    theirs = Path(os.environ["HOME"]) / "servers.json"
    out = world.run("doctor", "--install-config", str(theirs))
    assert out.code == 2 and f"--install-config {theirs} --server-js PATH" in out.stderr
    # With a build of its source release where the README puts it, doctor names it instead.
    source = Path(os.environ["HOME"]) / ".local/share/agent-memory/src"
    (source / "dist" / "mcp").mkdir(parents=True)
    (source / "dist" / "mcp" / "server.js").write_text("// the server\n")
    (source / "package.json").write_text('{"version": "5.1.0"}')
    row = {c["name"]: c for c in world.json("doctor").data["checks"]}["agent-memory"]
    assert row["ok"] and "5.1.0 at" in row["detail"] and "built from its source" in row["detail"]


def _surface(world: World, at: str) -> dict[str, object]:
    out = world.json("surface", "--now", f"{DAY}T{at}")
    assert out.code == 0, out.stdout
    data: dict[str, object] = out.data
    return data


def test_surface_keeps_the_lines_it_did_not_write_in_a_copy_named_in_its_output(
    world: World,
) -> None:
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    recent = world.workspace / "RECENT.md"
    kept = world.workspace / "RECENT.kept.md"
    assert "user_lines" not in _surface(world, "14:05") and not kept.exists()
    mine = recent.read_text()
    # A person adds a line, and the agent rewrites one of memfuse's entries its own way.
    recent.write_text(
        mine.replace("- met Bob about the staging deploy", "- met Bob (he wants a rollback plan)")
        + "\n- call the bank before Friday\n"
    )
    data = _surface(world, "22:05")
    assert data["user_lines"] == {"count": 2, "copy": str(kept)}
    text = kept.read_text()
    assert "- call the bank before Friday" in text and "he wants a rollback plan" in text
    assert "_auto-updated" not in text and "## 最近事件" not in text  # memfuse's lines are not
    assert "call the bank" not in recent.read_text()
    human = world.run("surface", "--now", f"{DAY}T22:10").stdout
    assert "kept in" not in human  # nothing new of the user's: nothing kept again
    # A mark in the file cannot pass a line off as memfuse's: only its own record counts.
    recent.write_text(recent.read_text() + "- <!-- memfuse --> pay rent\n")
    assert _surface(world, "22:15")["user_lines"] == {"count": 1, "copy": str(kept)}
    assert kept.read_text().count("call the bank") == 1  # a line is kept once


def test_a_new_state_folder_takes_memfuses_own_recent_md_header_as_its_own(world: World) -> None:
    # RECENT.md from an earlier install (its state folder gone): its time line is memfuse's.
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    recent = world.workspace / "RECENT.md"
    recent.write_text(
        "# RECENT.md\n\n_auto-updated: 2026-12-07 03:12_\n\n## 最近情感\n\n## 最近决策/知识\n\n"
        "## 最近事件\n"
    )
    out = world.json("surface", "--now", f"{DAY}T14:05")
    assert out.code == 0 and "user_lines" not in out.data and "did not write" not in out.stderr
    assert not (world.workspace / "RECENT.kept.md").exists()
    assert "- met Bob about the staging deploy" in recent.read_text()


def test_the_kept_copy_is_bounded_and_never_written_through_a_link(
    world: World, tmp_path: Path
) -> None:
    from memfuse.workspace.recent_md import KEPT_MAX

    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    recent = world.workspace / "RECENT.md"
    _surface(world, "14:05")
    recent.write_text("".join(f"- note {i} {'x' * 60}\n" for i in range(20_000)))  # 1.3 MB
    out = world.json("surface", "--now", f"{DAY}T15:05")
    kept = world.workspace / "RECENT.kept.md"
    assert len(kept.read_bytes()) <= KEPT_MAX and "oldest line(s) were dropped" in out.stderr
    outside = tmp_path / "outside.md"
    outside.write_text("not memfuse's\n")
    kept.unlink()
    kept.symlink_to(outside)
    recent.write_text("- a line of the agent's\n")
    data = _surface(world, "16:05")
    assert outside.read_text() == "not memfuse's\n"  # the link was not written through
    copy = Path(str(data["user_lines"]["copy"]))  # type: ignore[index]
    assert copy.is_relative_to(world.state)  # kept in memfuse's own state folder instead
    assert "- a line of the agent's" in copy.read_text()


def test_a_server_command_that_is_not_there_is_named_too(world: World, tmp_path: Path) -> None:
    import json

    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    world.gateway.down = "failed"
    config = tmp_path / "mcporter.json"
    gone = tmp_path / "old-node" / "bin" / "node"
    config.write_text(json.dumps({"mcpServers": {"agent-memory": {"command": str(gone)}}}))
    code, stderr = _sync(world, "10:00", "--mcporter-config", str(config))
    assert code == 78 and f"its command {gone} does not exist" in stderr
    # A server that is there and down is an outage, not a setup mistake: exit 0, as before.
    config.write_text(json.dumps({"mcpServers": {"agent-memory": {"command": "sh"}}}))
    assert _sync(world, "11:00", "--mcporter-config", str(config))[0] == 0
