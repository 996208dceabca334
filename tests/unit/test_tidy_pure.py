from __future__ import annotations

from datetime import date
from pathlib import Path

from memfuse.store.answers import StoredMemory
from memfuse.text.consistency import check
from memfuse.workspace.journal import parse
from memfuse.workspace.layout import Workspace
from memfuse.workspace.memory_md import memory_md_facts
from memfuse.workspace.names import monday_of
from memfuse.workspace.rollup import roll_up, shift_headings
from memfuse.workspace.sections import closed, swallows
from memfuse.workspace.weekly import weekly_sections

MEMORY_MD = "# MEMORY\n\n## Preferences\n- User prefers dark mode\n- 用户喜欢简短的回答\n"


def verdicts(memory: str) -> list[str]:
    facts = memory_md_facts(MEMORY_MD)
    return [f.verdict for f in check([StoredMemory(memory, "knowledge")], facts, 0.85, 0.3)]


def test_consistency_verdicts() -> None:
    assert verdicts("User prefers dark mode") == ["consistent"]
    assert verdicts("User prefers light mode") == ["conflict"]
    assert verdicts("用户喜欢详细的回答") == ["conflict"]
    assert verdicts("Deployed the billing service on Tuesday") == ["not-in-memory-md"]


def test_a_memory_contained_in_a_longer_memory_md_line_is_consistent() -> None:
    text = "- User prefers dark mode in every editor and terminal\n"
    memories = [StoredMemory("User prefers dark mode", "knowledge")]
    assert [f.verdict for f in check(memories, memory_md_facts(text), 0.85, 0.3)] == ["consistent"]


def test_memory_md_facts_skip_headings_and_blank_lines() -> None:
    assert memory_md_facts(MEMORY_MD) == [(4, "User prefers dark mode"), (5, "用户喜欢简短的回答")]


def test_headings_shift_below_the_date_section_but_not_inside_code() -> None:
    text = "# 2026-02-16\n## 14:00 sync\n- a\n```\n# not a heading\n```\n"
    assert (
        shift_headings(text) == "### 2026-02-16\n#### 14:00 sync\n- a\n```\n# not a heading\n```\n"
    )


def test_monday_of() -> None:
    assert monday_of(date(2026, 2, 22)) == date(2026, 2, 16)  # a Sunday
    assert monday_of(date(2026, 2, 16)) == date(2026, 2, 16)


def test_roll_up_keeps_every_bullet_with_its_time_and_is_idempotent(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    daily = memory / "2026-02-17.md"
    daily.write_text("## 09:00\n- one\n- two\n  - nested\n## 22:00\n- three\n")
    bullets_before = [(b.key, b.text) for b in parse(daily.read_text())]
    first = roll_up(Workspace(tmp_path), date(2026, 2, 17), daily, daily.read_bytes())
    assert first.weekly == memory / "weekly" / "2026-02-16.md"
    assert first.archived_to == memory / "archive" / "2026-02-17.md"
    weekly = first.weekly.read_text()
    assert [(b.key, b.text) for b in parse(weekly)] == bullets_before
    # An interrupted run left the daily behind: the next run does not append it twice.
    daily.write_text("## 09:00\n- one\n- two\n  - nested\n## 22:00\n- three\n")
    second = roll_up(Workspace(tmp_path), date(2026, 2, 17), daily, daily.read_bytes())
    assert not second.appended
    assert first.weekly.read_text() == weekly
    assert second.archived_to == memory / "archive" / "2026-02-17.1.md"


def test_a_daily_nested_too_deep_to_parse_shifts_and_splits_as_its_blocks_read() -> None:
    """Past the parser's depth, headings are found block by block, as the journal reading
    finds them: not in a fence nor in a comment, whatever the deep line before them."""
    deep = "> " * 200 + "- buried"
    daily = f"## 14:00\n- one\n{deep}\n\n<!--\n## not a heading\n-->\n```\n## code\n```\n## 22:00\n"
    shifted = daily.replace("## 14:00", "### 14:00").replace("## 22:00", "### 22:00")
    assert shift_headings(daily) == shifted
    week = f"# Week\n\n## 2026-02-16\n{daily}\n## 2026-02-17\n- two\n"
    assert sorted(weekly_sections(week)) == [date(2026, 2, 16), date(2026, 2, 17)]


def test_a_daily_too_deep_to_parse_has_the_comment_it_ends_in_closed() -> None:
    """Past the parser's depth, the roll-up's closer reads the last block as the journal
    reading does: a comment left open at the daily's end is closed, so the next day's heading
    stays a heading (only a fence was looked for there before), its bullets the same."""
    deep = "> " * 200 + "- buried"
    daily = f"## 14:00\n- one\n{deep}\n\n<!-- left open\n- hidden"
    assert swallows(daily)
    rolled = closed(daily)
    assert rolled == f"{daily}\n-->"
    assert not swallows(rolled)
    assert [b.text for b in parse(rolled)] == [b.text for b in parse(daily)]
