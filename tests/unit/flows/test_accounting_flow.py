"""A sync's accounting (issue 39): every list item a reader sees is a bullet or named, what
each exclusion rule took is counted and shown, text no rule took is a warning, and a bullet
that should be in the store and is not becomes a status alarm."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memfuse.store.gateway import CallFailed
from memfuse.workspace import blocks
from tests.fakes import World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
JOURNAL = (
    "# Journal\n\n## 09:30\n"
    "- Met Bob about the staging deploy of the billing service\n"
    "- <!-- src:chat --> The deploy key rotates on Monday\n"
    "> - Migrate billing before Friday\n"
    "\n```\n- not a bullet: code\n```\n\n"
    "Carol said the rollout can wait: prose, no bullet\n"
    "\n<!-- openclaw:dreaming:light:start -->\n- a dream line\n"
    "<!-- openclaw:dreaming:light:end -->\n"
    "- After the dream block, a note of the agent's own\n"
)


def test_a_dry_run_counts_what_each_rule_took_and_names_the_text_no_rule_took(
    world: World,
) -> None:
    world.journal(DAY, JOURNAL)
    out = world.json("sync", "--dry-run", "--date", DAY, "--now", NOW)
    account = out.data["accounting"]
    assert account["bullets"] == 4  # the plain one, after a comment, in a quote, after dreaming
    assert account["to_send"] == 4 and account["unchanged"] == 0
    assert account["code_lines"] == 3  # the fence and its line
    assert account["comments"] >= 1
    assert account["dreaming_blocks"] == 1
    assert account["unaccounted_lines"] == 1
    assert account["unaccounted"] == [{"file": f"memory/{DAY}.md", "lines": 1, "first_line": 12}]
    assert f"memory/{DAY}.md: 1 line(s) of text from line 12" in out.warnings_text
    human = world.run("sync", "--dry-run", "--date", DAY, "--now", NOW)
    assert "read: 1 journal form(s)" in human.stdout
    assert "1 dreaming block(s)" in human.stdout and "1 line(s) of other text" in human.stdout


def test_a_journal_nested_past_the_readings_budget_keeps_its_bullets_and_is_named(
    world: World, monkeypatch: Any
) -> None:
    """Lines 90 items deep: past the budget (here 11 of them) each is read as it is, which is
    the item a viewer shows, and the run says which form and how many lines."""
    monkeypatch.setattr(blocks, "BUDGET", 1_000)
    world.journal(DAY, "## 09:30\n" + "".join(" - " * 90 + f"note {n}\n" for n in range(40)))
    out = world.json("sync", "--dry-run", "--date", DAY, "--now", NOW)
    account = out.data["accounting"]
    assert account["bullets"] == 40 and account["deep_lines"] == 29
    assert account["deep"] == [{"file": f"memory/{DAY}.md", "lines": 29}]
    assert f"memory/{DAY}.md: 29 line(s) nest too deep to read" in out.warnings_text


def test_status_shows_what_the_last_sync_read(world: World) -> None:
    world.journal(DAY, JOURNAL)
    assert world.run("sync", "--now", NOW).code == 0
    status = world.json("status", "--now", NOW)
    read = status.data["commands"]["sync"]["last_run"]["read"]
    assert read["bullets"] == 4 and read["unaccounted_lines"] == 1
    assert "read 1 journal form(s), " in world.run("status", "--now", NOW).stdout


def test_a_bullet_whose_calls_keep_failing_for_a_day_is_an_alarm(world: World) -> None:
    """One bullet the store keeps refusing with an error (not its gate) while the rest are
    stored: each sync exits 0 and retries it; after a day, status needs a person."""

    def poison(tool: str, arguments: Mapping[str, Any]) -> None:
        if tool == "remember" and "poison" in str(arguments.get("content")):
            raise CallFailed("remember failed: injected for one bullet")

    world.gateway.hook = poison
    world.journal(DAY, "## 09:30\n- A poison pill note the store chokes on\n- A fine note\n")
    first = world.json("sync", "--now", NOW)
    assert first.code == 0 and first.data["counts"]["failed"] == 1
    assert world.json("status", "--now", NOW).data["alarms"] == []
    later = world.json("sync", "--now", "2026-11-30T22:00")
    assert later.code == 0 and later.data["counts"]["failed"] == 1
    status = world.json("status", "--now", "2026-11-30T22:05")
    assert status.code == 4
    assert any(
        "1 bullet(s) have not reached the store since 2026-11-29T22:00" in alarm
        and f"{DAY}#0930-1" in alarm
        for alarm in status.data["alarms"]
    ), status.data["alarms"]
