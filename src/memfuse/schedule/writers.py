"""Other scheduled jobs that rewrite MEMORY.md, and moving memfuse's tidy out of their minute.

tidy reads MEMORY.md (its consistency check) and copies it (the daily backup): in the same
minute as a job that rewrites it, tidy would check and keep a file half-way through a change.
The one such job known is OpenClaw's own dreaming sweep, which memory-core declares as
"Memory Dreaming Promotion" (declaration key `memory-core:memory-dreaming-promotion`, cron
`0 3 * * *` by default: `plugins.entries.memory-core.config.dreaming.frequency`), whose deep
phase rewrites MEMORY.md — at the minute memfuse's tidy runs by default. Names and markers are
from the `openclaw` package 2026.9.6 (dist/dreaming-*.mjs) and a job list of a local Gateway.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from memfuse.schedule.crontab import daily_times
from memfuse.schedule.runs import Schedule

DREAMING_JOB = "Memory Dreaming Promotion"
DREAMING_MARKERS = (
    "memory-core:memory-dreaming-promotion",  # its declaration key
    "[managed-by=memory-core.short-term-promotion]",  # its description's tag
    "__openclaw_memory_core_short_term_promotion_dream__",  # its payload's text
)
SHIFT_MINUTES = 30  # far enough that a sweep started on the minute is past its MEMORY.md write
MEMORY_READERS = ("tidy",)


def writes_memory_md(job: dict[str, Any]) -> bool:
    """Whether a job of OpenClaw's list is one that rewrites MEMORY.md."""
    if job.get("name") == DREAMING_JOB:
        return True
    payload = job.get("payload")
    said = [job.get("declarationKey"), job.get("description")]
    if isinstance(payload, dict):
        said += [payload.get("message"), payload.get("text")]
    return any(isinstance(s, str) and m in s for s in said for m in DREAMING_MARKERS)


def busy_times(listed: list[dict[str, Any]]) -> list[tuple[str, tuple[tuple[int, int], ...]]]:
    """(name, daily times) of each enabled job in the list that rewrites MEMORY.md."""
    found = []
    for job in listed:
        if not isinstance(job, dict) or job.get("enabled") is False or not writes_memory_md(job):
            continue
        schedule = job.get("schedule")
        expr = schedule.get("expr") if isinstance(schedule, dict) else None
        fields = expr.split() if isinstance(expr, str) else []
        if len(fields) == 6:  # a seconds field first
            fields = fields[1:]
        times = daily_times(*fields) if len(fields) == 5 else ()
        if times:
            found.append((str(job.get("name")), times))
    return found


def clear_of(
    schedule: Schedule, busy: list[tuple[str, tuple[tuple[int, int], ...]]]
) -> tuple[Schedule, list[str]]:
    """The schedule with every run that reads MEMORY.md moved off the minutes the busy jobs
    write it (later, by SHIFT_MINUTES at a time), and a note for each move."""
    taken = {t for _, times in busy for t in times}
    if not taken:
        return schedule, []
    notes = []
    runs = []
    for run in schedule.runs:
        if run.name not in MEMORY_READERS or not taken & set(run.times):
            runs.append(run)
            continue
        moved = tuple(_free(t, taken) for t in run.times)
        who = ", ".join(f"{name!r} at {_hhmm(times)}" for name, times in busy)
        notes.append(
            f"{run.name} moved from {_hhmm(run.times)} to {_hhmm(moved)}: {who} rewrites"
            " MEMORY.md in that minute"
        )
        runs.append(replace(run, times=moved, comment=_retimed(run.comment, run.times, moved)))
    return replace(schedule, runs=tuple(runs), notes=(*schedule.notes, *notes)), notes


def _free(time: tuple[int, int], taken: set[tuple[int, int]]) -> tuple[int, int]:
    minutes = time[0] * 60 + time[1]
    for _ in range(24 * 60 // SHIFT_MINUTES):
        if (minutes // 60 % 24, minutes % 60) not in taken:
            break
        minutes += SHIFT_MINUTES
    return (minutes // 60 % 24, minutes % 60)


def _hhmm(times: tuple[tuple[int, int], ...]) -> str:
    return " and ".join(f"{h:02d}:{m:02d}" for h, m in sorted(times))


def _retimed(
    comment: str, old: tuple[tuple[int, int], ...], new: tuple[tuple[int, int], ...]
) -> str:
    for (oh, om), (nh, nm) in zip(old, new, strict=True):
        comment = comment.replace(f"{oh:02d}:{om:02d}", f"{nh:02d}:{nm:02d}")
    return comment
