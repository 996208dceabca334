"""One description of memfuse's scheduled runs, checked once, for every scheduler to render.

Everything here may come from a hostile workspace path (a directory name can hold spaces,
quotes, `%`, `$`, unicode or a leading dash), so the values are checked where they enter: a
renderer can then quote them knowing that no newline, carriage return or NUL is left to break
a line of its format, and that every string can be written as UTF-8.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, tzinfo

from memfuse.errors import MemfuseError

# Stricter than [a-z0-9-]+: a name starting with a dash would read as an option to systemctl
# and launchctl, and a double dash is easy to mistype.
LABEL = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
LABEL_MAX = 64
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINE_BREAKERS = ("\n", "\r", "\0")


class ScheduleError(MemfuseError, ValueError):
    """A schedule that no scheduler could run as described (raised before anything is written)."""


class ParseError(MemfuseError, ValueError):
    """A scheduler file whose jobs cannot be read back exactly."""


def check_text(value: str, what: str) -> str:
    """`value` if it fits on one line of any format; newlines and NUL would split or cut it."""
    if not isinstance(value, str):
        raise ScheduleError(f"{what} must be a string, not {type(value).__name__}")
    for bad in _LINE_BREAKERS:
        if bad in value:
            raise ScheduleError(f"{what} contains {bad!r}: {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ScheduleError(f"{what} is not valid UTF-8: {value!r}") from None
    return value


def check_program(path: str) -> str:
    """An absolute, normalised path: schedulers run with no PATH of the user's, and some
    refuse paths with `//`, `/./` or `/../` in them."""
    check_text(path, "the program path")
    if not path.startswith("/"):
        raise ScheduleError(f"the program must be an absolute path, not {path!r}")
    if path != "/" and (posixpath.normpath(path) != path or path.startswith("//")):
        raise ScheduleError(f"the program path is not normalised: {path!r}")
    return path


def _is_slug(value: object) -> bool:
    """Lower-case letters and digits in dash-separated words, at most LABEL_MAX long."""
    return isinstance(value, str) and len(value) <= LABEL_MAX and bool(LABEL.fullmatch(value))


def _check_times(times: tuple[tuple[int, int], ...], name: str) -> tuple[tuple[int, int], ...]:
    if not times:
        raise ScheduleError(f"run {name!r} has no time to run at")
    checked: set[tuple[int, int]] = set()
    for pair in times:
        if len(pair) != 2 or not all(type(n) is int for n in pair):
            raise ScheduleError(f"run {name!r}: a time is an (hour, minute) pair, not {pair!r}")
        hour, minute = pair
        if not (0 <= hour <= 23 and 0 <= minute <= 59):
            raise ScheduleError(f"run {name!r}: {hour}:{minute:02} is not a time of day")
        checked.add((hour, minute))
    return tuple(sorted(checked))


@dataclass(frozen=True)
class Run:
    """One memfuse command and the local times of day it runs at.

    `times` is kept sorted and without repeats, so that a schedule read back from any format
    compares equal to the one written.
    """

    name: str
    argv: tuple[str, ...]
    times: tuple[tuple[int, int], ...]
    comment: str

    def __post_init__(self) -> None:
        if not _is_slug(self.name):
            raise ScheduleError(f"a run's name must be a slug like 'sync', not {self.name!r}")
        argv = tuple(self.argv)
        if not argv:
            raise ScheduleError(f"run {self.name!r} has an empty argv")
        check_program(argv[0])
        for i, arg in enumerate(argv[1:], 1):
            check_text(arg, f"run {self.name!r} argument {i}")
        check_text(self.comment, f"run {self.name!r} comment")
        object.__setattr__(self, "argv", argv)
        object.__setattr__(self, "times", _check_times(tuple(self.times), self.name))


@dataclass(frozen=True)
class Schedule:
    """All of memfuse's runs for one workspace, their environment, and the label naming them.

    `label` (e.g. "memfuse-ab12cd34", derived by the caller from the workspace) prefixes every
    unit, job and marker, so two workspaces never collide and memfuse can tell its own files
    from the user's.
    """

    runs: tuple[Run, ...]
    env: tuple[tuple[str, str], ...]
    label: str
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _is_slug(self.label):
            raise ScheduleError(f"the label must be a slug like 'memfuse-ab12cd34': {self.label!r}")
        runs, env, notes = tuple(self.runs), tuple(self.env), tuple(self.notes)
        if not runs:
            raise ScheduleError("a schedule needs at least one run")
        names = [run.name for run in runs]
        if len(set(names)) != len(names):
            raise ScheduleError(f"run names repeat: {names}")
        seen: set[str] = set()
        for pair in env:
            if len(pair) != 2:
                raise ScheduleError(f"an environment entry is a (name, value) pair: {pair!r}")
            name, value = pair
            if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
                raise ScheduleError(f"not an environment variable name: {name!r}")
            if name in seen:
                raise ScheduleError(f"environment variable {name} is set twice")
            seen.add(name)
            check_text(value, f"environment variable {name}")
        for note in notes:
            check_text(note, "a note")
        object.__setattr__(self, "runs", runs)
        object.__setattr__(self, "env", env)
        object.__setattr__(self, "notes", notes)

    def unit_name(self, run: Run) -> str:
        """The name every format gives this run: the label, a dash, the run's name."""
        return f"{self.label}-{run.name}"


@dataclass(frozen=True)
class Job:
    """One job as read back from a scheduler's file: what a check runs, and when.

    `env` is what the file itself sets for the job (the check starts from an empty environment
    and adds it); `times` is empty when the file's schedule is not a set of daily times, and
    `when` is that schedule as the file spells it. `command` is the text the scheduler runs
    (a cron line's command field, a unit's command), for messages and further checks.
    """

    source: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    times: tuple[tuple[int, int], ...]
    when: str
    command: str
    unread: tuple[str, ...] = ()  # settings of the file a check does not reproduce, as written


@dataclass(frozen=True)
class MemoryRewriter:
    """Another job that rewrites MEMORY.md: its name, daily times and the zone they are in
    (None: this machine's local time)."""

    name: str
    times: tuple[tuple[int, int], ...]
    zone: str | None = None


def merge_adjacent(jobs: list[Job]) -> list[Job]:
    """Jobs next to each other with one argv and environment as one job with all their
    times: a run whose times have different minutes is written as a line (or job) per minute,
    and reads back as the one run it was."""
    merged: list[Job] = []
    for job in jobs:
        last = merged[-1] if merged else None
        if last and last.times and job.times and (last.argv, last.env) == (job.argv, job.env):
            merged[-1] = Job(
                f"{last.source}, {job.source}",
                job.argv,
                job.env,
                tuple(sorted({*last.times, *job.times})),
                f"{last.when}; {job.when}",
                last.command,
                last.unread,
            )
        else:
            merged.append(job)
    return merged


def due_between(
    times: tuple[time, ...], zone: tzinfo | None, after: datetime, until: datetime
) -> list[datetime]:
    """The moments a daily schedule was due in (after, until], oldest first.

    Each day's times are placed by `zone`'s own rules for that day (a ZoneInfo; None: this
    machine's local rules), so the day the clocks change has its own offset. A time the
    clocks skip is due when the gap ends; a time they pass twice, the first time.
    """
    if until <= after:
        return []
    day, last = after.astimezone(zone).date(), until.astimezone(zone).date()  # None: local
    found: list[datetime] = []
    while day <= last:
        for t in times:
            naive = datetime.combine(day, t)
            at = naive.replace(tzinfo=zone) if zone is not None else naive.astimezone()
            if zone is not None:  # a skipped time means its moment after the gap
                at = at.astimezone(UTC).astimezone(zone)
            if after < at <= until:
                found.append(at)
        day += timedelta(days=1)
    return sorted(found)
