"""Other scheduled jobs that rewrite MEMORY.md, and moving memfuse's tidy out of their minute
(why, and clashes compared as instants: docs/operations.md, "Dreaming"). Which jobs those are
is each host's to say (`Scheduler.writers_here`, `writers_in`); each quarter of the year is
tried, so a clash half the year is one.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memfuse.schedule.runs import MemoryRewriter, Schedule

SHIFT_MINUTES = 30  # far enough that a sweep started on the minute is past its MEMORY.md write
MEMORY_READERS = ("tidy",)
SEASONS = (0, 91, 182, 273)  # days after the reference day on which instants are compared
Times = tuple[tuple[int, int], ...]


def zone_of(name: str | None) -> tzinfo | None:
    """The zone named (None, or a name this machine does not know: its local rules)."""
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ValueError, OSError, ZoneInfoNotFoundError):
        return None


def in_zone(writer: MemoryRewriter, zone: str | None, day: date | None = None) -> Times:
    """The writer's daily times as clock times of `zone` (each season's, when they differ)."""
    if writer.zone == zone:
        return writer.times
    start = day or date.today()
    theirs, ours = zone_of(writer.zone), zone_of(zone)
    found: set[tuple[int, int]] = set()
    for offset in SEASONS:
        on = start + timedelta(days=offset)
        for hour, minute in writer.times:
            naive = datetime.combine(on, time(hour, minute))
            at = naive.replace(tzinfo=theirs) if theirs else naive.astimezone()
            here = at.astimezone(ours) if ours else at.astimezone()
            found.add((here.hour, here.minute))
    return tuple(sorted(found))


def shown(writer: MemoryRewriter, zone: str | None) -> str:
    """A writer's times as it keeps them, its zone named when it is not the schedule's."""
    return hhmm(writer.times) + (f" {writer.zone}" if writer.zone and writer.zone != zone else "")


def clear_of(
    schedule: Schedule, busy: list[MemoryRewriter], zone: str | None = None, day: date | None = None
) -> tuple[Schedule, list[str]]:
    """The schedule (its times in `zone`) with every run that reads MEMORY.md moved off the
    minutes the busy jobs write it (later, by SHIFT_MINUTES at a time), and a note per move."""
    taken = {t for writer in busy for t in in_zone(writer, zone, day)}
    if not taken:
        return schedule, []
    notes = []
    runs = []
    for run in schedule.runs:
        if run.name not in MEMORY_READERS or not taken & set(run.times):
            runs.append(run)
            continue
        moved = tuple(_free(t, taken) for t in run.times)
        who = ", ".join(f"{w.name!r} at {shown(w, zone)}" for w in busy)
        notes.append(
            f"{run.name} moved from {hhmm(run.times)} to {hhmm(moved)}: {who} rewrites"
            " MEMORY.md in that minute"
        )
        comment = run.comment
        for old, new in zip(run.times, moved, strict=True):
            comment = comment.replace(hhmm((old,)), hhmm((new,)))
        runs.append(replace(run, times=moved, comment=comment))
    return replace(schedule, runs=tuple(runs), notes=(*schedule.notes, *notes)), notes


def _free(at: tuple[int, int], taken: set[tuple[int, int]]) -> tuple[int, int]:
    minutes = at[0] * 60 + at[1]
    for _ in range(24 * 60 // SHIFT_MINUTES):
        if (minutes // 60 % 24, minutes % 60) not in taken:
            break
        minutes += SHIFT_MINUTES
    return (minutes // 60 % 24, minutes % 60)


def hhmm(times: Times) -> str:
    return " and ".join(f"{h:02d}:{m:02d}" for h, m in sorted(times))
