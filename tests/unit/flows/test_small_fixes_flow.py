"""Small things a person running memfuse notices (issue 14's list), in-process."""

from __future__ import annotations

from tests.fakes import World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
GOOD = "# RECENT.md\n\n## 最近情感\n- 今天很开心，终于修好了登录问题\n"


def test_surface_keeps_a_good_recent_md_when_store_and_journals_give_nothing(
    world: World,
) -> None:
    (world.workspace / "RECENT.md").write_text(GOOD)
    world.gateway.down = "missing"
    out = world.json("surface", "--now", NOW)
    assert out.code == 0
    assert (world.workspace / "RECENT.md").read_text() == GOOD
    assert out.data["kept"] is True
    warnings = out.envelope["warnings"]
    assert any("no journal in the last 3 day(s)" in w for w in warnings)
    assert any("existing RECENT.md is kept" in w for w in warnings)


def test_surface_writes_a_fresh_recent_md_when_there_was_none(world: World) -> None:
    world.gateway.down = "missing"
    out = world.json("surface", "--now", NOW)
    assert out.code == 0
    assert (world.workspace / "RECENT.md").exists()


def test_breaker_warning_names_the_missing_program_not_a_count(world: World) -> None:
    world.journal(DAY, "- Met Bob about the staging deploy\n- Reviewed the billing plan\n")
    world.gateway.down = "missing"
    out = world.json("sync", "--now", NOW)
    assert out.code == 0
    assert not any("times in a row" in w for w in out.envelope["warnings"])


def test_sync_without_todays_journal_says_which_file_is_missing(world: World) -> None:
    out = world.run("sync", "--now", NOW)
    assert out.code == 0
    assert f"memory/{DAY}.md does not exist yet" in out.stdout


def test_a_bad_transport_flag_is_rejected_like_the_environment_value(world: World) -> None:
    flag = world.run("sync", "--transport", "bogus", "--now", NOW)
    env = world.run("sync", "--now", NOW, env={"MEMFUSE_TRANSPORT": "bogus"})
    assert flag.code == env.code == 2
    assert "--transport must be 'auto', 'mcporter' or 'session'" in flag.stderr
    assert "MEMFUSE_TRANSPORT must be 'auto', 'mcporter' or 'session'" in env.stderr


def test_surface_stdout_puts_the_text_in_the_envelope_and_survives_quiet(world: World) -> None:
    world.journal(DAY, "- Shipped the billing fix today\n")
    assert world.run("sync", "--now", NOW).code == 0
    out = world.json("surface", "--stdout", "--now", NOW)
    assert "Shipped the billing fix" in out.data["text"]
    quiet = world.run("surface", "--stdout", "-q", "--now", NOW)
    assert "Shipped the billing fix" in quiet.stdout
    assert not (world.workspace / "RECENT.md").exists()
