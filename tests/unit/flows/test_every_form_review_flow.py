"""Every form, reviewed (issue 32): what a hostile workspace does to a day made of many forms —
many archived copies, a roll-up with no section for a day or one for a day outside its week,
day headings inside code fences. In-process, against the scripted store."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

import memfuse.recall.rows as rows_module
from memfuse.workspace.layout import Workspace
from memfuse.workspace.rollup import shift_headings
from memfuse.workspace.weekly import weekly_sections
from tests.fakes import World

DAY = "2026-11-16"  # a Monday
LATER = "2026-11-30"  # two weeks on: DAY is old enough to archive
WEEK = "2026-11-30"  # a Monday: memory/weekly/2026-11-30.md holds 2026-11-30..2026-12-06
COPIES = 200


def weekly(world: World, monday: str, text: str) -> Path:
    path = world.workspace / "memory" / "weekly" / f"{monday}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def held(world: World) -> dict[str, str]:
    return world.gateway.journal_uris()


def covered(world: World) -> set[str]:
    """The journal files the ledger notes as settled (a plain sync passes over them)."""
    db = sqlite3.connect(world.state / "ledger.sqlite3")
    try:
        return {str(row[0]) for row in db.execute("SELECT path FROM stamps")}
    finally:
        db.close()


def counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    """Count the calls to `module.name` (a seam), each still made."""
    calls = [0]
    real: Callable[..., object] = getattr(module, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


# --- 1. the recall index is linear in a day's archived copies -------------------------------
def test_a_day_with_many_archived_copies_is_indexed_once_not_once_per_copy(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = world.workspace / "memory" / "archive"
    archive.mkdir(parents=True)
    (archive / f"{DAY}.md").write_text("- the first copy holds the kettle note\n")
    for n in range(1, COPIES + 1):
        (archive / f"{DAY}.{n}.md").write_text(f"- copy{n} zebra{n} marker\n")
    world.journal(DAY, "- the daily says the ferry leaves at nine\n")
    terms = counting(monkeypatch, rows_module, "doc_terms")
    world.gateway.down = "missing"  # the journals alone
    found = world.json("recall", "zebra137", "--now", f"{LATER}T14:00")
    assert found.code == 0, found.stderr
    bullets = COPIES + 2
    # each bullet's terms made once (and the question's): not once per file of its day
    assert terms[0] <= 3 * bullets, terms[0]
    (hit,) = [h for h in found.data["results"] if "zebra137" in h["content"]]
    assert hit["location"] == f"memory/archive/{DAY}.137.md:1"
    for n in (1, COPIES):  # every copy's own bullet is there, at its own file
        again = world.json("recall", f"zebra{n}", "--now", f"{LATER}T14:00")
        assert [h["location"] for h in again.data["results"] if f"zebra{n} " in h["content"]
                ] == [f"memory/archive/{DAY}.{n}.md:1"]  # fmt: skip


# --- 2. a roll-up with no section for a day settles -----------------------------------------
def test_a_roll_up_with_no_section_for_a_day_is_not_read_again_by_every_sync(
    world: World,
) -> None:
    world.journal(WEEK, "- Monday's own note about the heating\n")
    weekly(world, WEEK, "# Week of 2026-11-30\n\nJust a few words, no day's section.\n")
    first = world.json("sync", "--now", f"{WEEK}T22:00")
    assert first.code == 0 and first.data["counts"]["added"] == 1, first.stderr
    again = world.json("sync", "--now", f"{WEEK}T22:10")
    assert again.data["dates"] == [], again.data  # nothing changed: nothing read
    alone = weekly(world, "2026-12-07", "# Week of 2026-12-07\n\nOnly prose here.\n")
    assert world.json("sync", "--now", "2026-12-07T22:00").code == 0
    assert "memory/weekly/2026-12-07.md" in covered(world)  # read: settled, like any journal
    alone.write_text("# Week of 2026-12-07\n\n## 2026-12-08\n- a Tuesday note, added later\n")
    late = world.json("sync", "--now", "2026-12-08T22:00")
    assert late.data["dates"] == ["2026-12-08"] and late.data["counts"]["added"] == 1


# --- 3. a roll-up's section for a day outside its week -------------------------------------
STRAY = "The lease renewal was signed on the first of October"


def test_a_section_outside_the_roll_ups_week_is_named_until_a_person_moves_it(
    world: World,
) -> None:
    rollup = weekly(
        world,
        WEEK,
        f"# Week of {WEEK}\n\n## {WEEK}\n- Monday in the right week\n\n## 2026-10-01\n- {STRAY}\n",
    )
    synced = world.json("sync", "--now", f"{WEEK}T22:00")
    assert synced.code == 0 and synced.data["counts"]["added"] == 1, synced.stderr
    said = synced.stderr
    assert f"memory/weekly/{WEEK}.md" in said and "2026-10-01" in said, said
    assert STRAY not in held(world).values()  # not synced under a day the file does not name
    status = world.json("status", "--now", f"{WEEK}T22:05")
    assert status.code == 4, status.stdout
    assert f"memory/weekly/{WEEK}.md" in status.stdout and "2026-10-01" in status.stdout
    # a person moves the section to its day: synced, and the alarm is gone
    world.journal("2026-10-01", f"- {STRAY}\n")
    rollup.write_text(f"# Week of {WEEK}\n\n## {WEEK}\n- Monday in the right week\n")
    fixed = world.json("sync", "--now", f"{WEEK}T22:10")
    assert fixed.data["counts"]["added"] == 1 and STRAY in held(world).values(), fixed.stderr
    assert world.json("status", "--now", f"{WEEK}T22:15").code == 0


# --- 4. day headings inside code fences ------------------------------------------------------
FENCED = f"""# Week of {WEEK}

## {WEEK}

- Monday's note before the code

````markdown
```
## 2026-12-01
- an example inside the code, not a bullet
```
````

~~~
## 2026-12-02
- more code, not a bullet
~~~

- Monday's note after the code

## 2026-12-03

- Wednesday's own note
"""


def test_a_day_heading_inside_a_fence_is_code_not_a_section(world: World) -> None:
    weekly(world, WEEK, FENCED)
    synced = world.json("sync", "--all", "--now", f"{WEEK}T22:00")
    assert synced.code == 0, synced.stderr
    texts = held(world)
    assert sorted(texts.values()) == [
        "Monday's note after the code",
        "Monday's note before the code",
        "Wednesday's own note",
    ]
    assert all("2026-12-01" not in uri and "2026-12-02" not in uri for uri in texts)
    sections = weekly_sections(FENCED)
    assert sorted(sections) == [date(2026, 11, 30), date(2026, 12, 3)]
    unclosed = f"## {WEEK}\n- a\n```\n## 2026-12-01\n- code to the end\n"
    assert sorted(weekly_sections(unclosed)) == [date(2026, 11, 30)]


def test_a_daily_that_leaves_a_fence_open_does_not_swallow_the_next_days_section(
    world: World,
) -> None:
    monday = "- Monday's note\n\n```python\nprint('the fence is never closed')\n"
    world.journal(DAY, monday)
    world.journal("2026-11-17", "- Tuesday's note\n")
    assert world.json("sync", "--all", "--now", f"{LATER}T02:00").code == 0
    rolled = world.json("tidy", "--archive", "--now", f"{LATER}T03:00")
    assert [r["date"] for r in rolled.data["archive"]["archived"]] == [DAY, "2026-11-17"]
    ws = Workspace(world.workspace)
    sections = ws.read_weekly(ws.weekly_path(date.fromisoformat(DAY)), print)
    assert sections is not None
    shown = {day.isoformat(): [b.text for s in part for b in s.bullets]
             for day, part in sections.items()}  # fmt: skip
    assert shown == {DAY: ["Monday's note"], "2026-11-17": ["Tuesday's note"]}
    again = world.json("sync", "--all", "--prune", "--now", f"{LATER}T04:00")
    assert again.data["counts"]["added"] == again.data["counts"]["updated"] == 0
    assert again.data["stale"] == [] and again.data["pruned"] == []


def test_shifting_a_dailys_headings_leaves_code_in_a_longer_fence_as_it_is() -> None:
    daily = "# Notes\n\n````\n```\n# a comment in the code\n````\n\n## 14:00\n- x\n"
    assert shift_headings(daily) == (
        "### Notes\n\n````\n```\n# a comment in the code\n````\n\n#### 14:00\n- x\n"
    )


# --- what else an attacker tries -------------------------------------------------------------
def test_an_archived_copy_with_a_huge_number_is_read_and_a_zero_padded_one_is_named(
    world: World,
) -> None:
    archive = world.workspace / "memory" / "archive"
    archive.mkdir(parents=True)
    (archive / f"{DAY}.md").write_text("- the first copy of the day\n")
    (archive / f"{DAY}.99999999999999999999.md").write_text("- a copy numbered past any int64\n")
    (archive / f"{DAY}.01.md").write_text("- a zero-padded copy\n")
    synced = world.json("sync", "--all", "--now", f"{LATER}T14:00")
    assert "a copy numbered past any int64" in held(world).values(), synced.stderr
    assert f"memory/archive/{DAY}.01.md" in synced.stderr  # named, never read in silence


def test_a_day_heading_naming_no_real_day_is_named_until_fixed(world: World) -> None:
    weekly(world, "2026-02-23", "## 2026-02-23\n- a real Monday\n\n## 2026-02-30\n- lost?\n")
    synced = world.json("sync", "--all", "--now", "2026-03-02T14:00")
    assert "## 2026-02-30" in synced.stderr and "memory/weekly/2026-02-23.md" in synced.stderr
    status = world.json("status", "--now", "2026-03-02T14:05")
    assert status.code == 4 and "2026-02-30" in status.stdout


def test_an_archive_that_is_a_file_refuses_the_archiving_not_the_whole_tidy(
    world: World,
) -> None:
    world.journal(DAY, "- a note to archive\n")
    assert world.json("sync", "--all", "--now", f"{DAY}T22:00").code == 0
    (world.workspace / "memory" / "archive").write_text("not a folder\n")
    tidy = world.json("tidy", "--archive", "--now", f"{LATER}T03:00")
    assert tidy.code in (0, 1), (tidy.code, tidy.stderr)
    assert tidy.data["archive"]["archived"] == [] and "not archiving" in tidy.stderr
    assert (world.workspace / "memory" / f"{DAY}.md").exists()


# --- a sync of some days of a roll-up leaves its other days to read ------------------------
def test_a_sync_of_one_day_does_not_settle_a_roll_up_whose_other_days_it_did_not_read(
    world: World,
) -> None:
    weekly(world, WEEK, "## 2026-11-30\n- Monday's note\n\n## 2026-12-02\n- Wednesday's note\n")
    now = "2026-12-06T22:00"
    assert world.json("sync", "--now", now).code == 0
    assert set(held(world).values()) == {"Monday's note", "Wednesday's note"}
    # The agent adds a note under Wednesday; the operator then syncs Monday alone.
    weekly(
        world, WEEK,
        "## 2026-11-30\n- Monday's note\n\n## 2026-12-02\n- Wednesday's note\n"
        "- A second note on Wednesday\n",
    )  # fmt: skip
    one = world.json("sync", "--date", "2026-11-30", "--now", now)
    assert one.code == 0, one.stderr
    assert "A second note on Wednesday" not in held(world).values()
    plain = world.json("sync", "--now", now)  # the next plain sync reads Wednesday
    assert plain.code == 0, plain.stderr
    assert "A second note on Wednesday" in held(world).values()
