"""`surface`'s decision of what RECENT.md holds is a pure function: driven with plain data."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memfuse.commands.surface import SurfaceReading, plan
from memfuse.settings import Budget
from memfuse.workspace.recent_md import Record

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
BUDGET = Budget()
OLD = "# RECENT.md\n\n## 最近情感\n\n## 最近决策/知识\n\n## 最近事件\n- Shipped 2.4\n"


def _record(text: str, kind: str = "event", days_ago: float = 1) -> Record:
    return Record(text, kind, vitality=0.5, when=NOW - timedelta(days=days_ago))


def test_the_store_wins_and_the_journals_fill_in_only_when_it_gives_nothing() -> None:
    stored = plan(
        SurfaceReading([_record("Met Bob about the deploy")], [_record("x")]), NOW, BUDGET
    )
    assert stored.source == "agent-memory" and "Met Bob" in stored.text
    journal = plan(SurfaceReading([], [_record("Wrote the runbook")]), NOW, BUDGET)
    assert journal.source == "journals" and "Wrote the runbook" in journal.text


def test_records_outside_the_window_give_nothing_and_the_old_file_is_kept() -> None:
    stale = [_record("A month-old note", days_ago=BUDGET.window_days + 30)]
    kept = plan(SurfaceReading(stale, [], OLD), NOW, BUDGET)
    assert kept.keep_old and "A month-old note" not in kept.text
    assert not plan(SurfaceReading(stale, [], None), NOW, BUDGET).keep_old  # nothing worth keeping


def test_the_budget_caps_what_is_written() -> None:
    many = [_record(f"Event number {n} of the day", days_ago=n / 100) for n in range(200)]
    small = Budget(max_lines=12)
    done = plan(SurfaceReading(many), NOW, small)
    lines = done.text.splitlines()
    assert len(lines) == 12 and not done.keep_old  # filled to the cap, not past it
    assert [line for line in lines if line.startswith("- ")] == [
        f"- Event number {n} of the day"
        for n in range(3)  # the newest, newest first
    ]
