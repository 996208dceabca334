"""Run history and escalation: what each sync, surface and tidy did (`runs.json` in the state
folder, the last `KEEP` per command), and when silence must end (`assess`; the rules:
docs/operations.md, "Scheduling")."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import takewhile
from typing import Any

from memfuse.confine import UnsafePath
from memfuse.settings import Policy
from memfuse.state.folder import StateFolder
from memfuse.untrusted import load_json

KEEP = 30
LIFECYCLE = ("sync", "surface", "tidy")
RUNS_LIMIT = 4 << 20  # a runs.json larger than this was not written by memfuse
# A run that reached no store because of its own setup (exit 78, the cause named): not a store
# outage, so it neither counts toward nor breaks a streak of failing runs.
MISCONFIGURED = "misconfigured"
# How a misconfigured run's error begins (memfuse.run.runner): the cause follows.
SETUP_PREFIX = "the store was not reached, and its setup is why: "
ERROR_KEPT = 1000  # characters of a failed run's error kept in its record


@dataclass(frozen=True)
class RunRecord:
    """One finished run, as `memfuse status` shows it."""

    command: str
    started: str  # ISO date-time, the run's own clock
    duration_ms: int
    status: str  # ok | degraded | failed | locked (another run held the workspace)
    exit_code: int
    store: str  # ok (some call answered) | failed (every call failed) | idle (no call made)
    #            | misconfigured (every call failed, and the run's setup is why)
    calls: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    warning_count: int = 0
    read: Mapping[str, int] = field(default_factory=dict)  # sync: its accounting's numbers
    error: str = ""  # why it failed, in its own words (a misconfigured run: doctor's)
    setup: str = ""  # Settings.store_setup: whose run it was (by_schedule)

    @property
    def at(self) -> datetime:
        return datetime.fromisoformat(self.started)

    @property
    def succeeded(self) -> bool:
        """Did its job with the store reachable (warnings allowed: the store is best-effort)."""
        return self.status not in ("failed", "locked") and self.store != "failed"

    def to_json(self) -> dict[str, Any]:
        value = asdict(self)
        value["counts"] = dict(self.counts)
        value["read"] = dict(self.read)
        value["warnings"] = list(self.warnings)
        return value

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> RunRecord:
        """A record as stored; ValueError for a time without a zone (never comparable to now)."""
        if datetime.fromisoformat(str(value["started"])).utcoffset() is None:
            raise ValueError(f"a run started at {str(value['started'])[:40]!r}, without a zone")
        return cls(
            command=str(value["command"]),
            started=str(value["started"]),
            duration_ms=int(value["duration_ms"]),
            status=str(value["status"]),
            exit_code=int(value["exit_code"]),
            store=str(value["store"]),
            calls=int(value.get("calls", 0)),
            counts={str(k): int(v) for k, v in dict(value.get("counts", {})).items()},
            warnings=tuple(str(w) for w in value.get("warnings", ())),
            warning_count=int(value.get("warning_count", 0)),
            read={str(k): int(v) for k, v in dict(value.get("read", {})).items()},
            error=str(value.get("error", ""))[:ERROR_KEPT],
            setup=str(value.get("setup", ""))[:40],
        )


@dataclass(frozen=True)
class Alarm:
    """Why a command needs a person, in one line."""

    command: str
    reason: str
    since: str

    def line(self) -> str:
        return f"{self.command} needs a person: {self.reason}"


class History:
    """The state folder's `runs.json`: the last runs of each lifecycle command."""

    def __init__(self, state: StateFolder) -> None:
        self.state = state
        self.path = state.runs

    def load(self, *, repair: bool = True) -> tuple[dict[str, list[RunRecord]], str | None]:
        """The records per command, oldest first, and a problem reading them (or None): a file
        that cannot be read is itself an alarm, and with `repair` it is moved aside."""
        runs: dict[str, list[RunRecord]] = {name: [] for name in LIFECYCLE}
        if not self.state.exists():
            return runs, None
        try:
            raw = self.state.read(self.state.RUNS, RUNS_LIMIT)
            value = load_json(raw, limit=RUNS_LIMIT)
            for name in LIFECYCLE:
                runs[name] = [RunRecord.from_json(r) for r in value.get(name, [])][-KEEP:]
        except FileNotFoundError:
            return runs, None
        except (OSError, UnsafePath, ValueError, TypeError, KeyError, AttributeError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            if repair:
                self.state.quarantine(self.state.RUNS, why)
            return {
                name: [] for name in LIFECYCLE
            }, f"the run history {self.path} cannot be read ({why})"
        return runs, None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the history for a read and a write: a run refused by the workspace lock adds
        itself while the run that holds it may be adding itself too."""
        fd = self.state.open(self.state.RUNS_LOCK, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def append(self, record: RunRecord, runs: dict[str, list[RunRecord]]) -> None:
        """Write `runs` (as just loaded) with `record` added, atomically."""
        runs = {**runs, record.command: [*runs.get(record.command, []), record]}
        value = {name: [r.to_json() for r in records[-KEEP:]] for name, records in runs.items()}
        self.state.write(self.state.RUNS, json.dumps(value, ensure_ascii=False, indent=1).encode())


def by_schedule(records: list[RunRecord], setup: str | None) -> tuple[list[RunRecord], str | None]:
    """The runs with the installed schedule's store `setup`, which alone decide whether a
    command needs a person (every run, when none has it: no schedule, or its setup changed);
    and the last run, when it was by hand with another setup (a mistyped --mcporter-config)
    and failed."""
    setup = setup if any(r.setup == setup for r in records) else None
    ours = [r for r in records if not (setup and r.setup and r.setup != setup)]
    last = records[-1] if records else None
    if last is None or last in ours or (last.succeeded and last.store != MISCONFIGURED):
        return ours, None
    why = last.error.removeprefix(SETUP_PREFIX) or last.status
    return ours, (
        f"a manual run failed ({stamp(last.at)}, exit {last.exit_code}): {why} — its setup is"
        " not the installed schedule's, so the schedule is not in alarm"
    )


FUTURE_SLACK = timedelta(hours=1)  # clocks that disagree a little are not an alarm


def assess(
    records: list[RunRecord], policy: Policy, now: datetime, *, current: bool = True
) -> Alarm | None:
    """Whether the command whose runs these are (oldest first) needs a person. `current`: the
    last is the run that just finished; without it (status), silence for twice `max_age` is
    an alarm too."""
    if not records:
        return None
    last = records[-1]
    name = last.command
    # After the real clock too: a run given an earlier --now is not told of later real runs.
    latest = max(now, datetime.now(UTC)) + FUTURE_SLACK
    ahead = next((r for r in records if r.at > latest), None)
    if ahead is not None:  # it would hide every other alarm: itself one
        why = (
            f"the run history holds a run dated {stamp(ahead.at)}, after now (a wrong clock, or"
            f" an edited file): delete {StateFolder.RUNS} in the state folder"
        )
        return Alarm(name, why, ahead.started)
    if not current and now - last.at > 2 * policy.max_age:
        return Alarm(name, f"no run since {stamp(last.at)} (is cron running it?)", last.started)
    # A run the lock refused says nothing of the setup: it neither raises nor clears this.
    settled = [r for r in records if r.status != "locked"]
    if not current and settled and settled[-1].store == MISCONFIGURED:
        return _misconfigured(settled)
    if last.succeeded:
        return None
    outages = [r for r in records if r.store != MISCONFIGURED]
    streak = len(list(takewhile(lambda r: r.store == "failed", reversed(outages))))
    successes = [r for r in records if r.succeeded]
    if streak >= policy.failed_runs:
        first = outages[-streak]
        ever = f"last success {stamp(successes[-1].at)}" if successes else "it has never succeeded"
        reason = (
            f"every store call failed in the last {streak} runs, since {stamp(first.at)}; {ever}"
        )
        return Alarm(name, reason, first.started)
    reference = successes[-1].at if successes else records[0].at
    if now - reference > policy.max_age:
        since = stamp(reference) if successes else f"the first one, {stamp(reference)}"
        first_bad = next((r for r in records if r.at > reference), last)
        reason = f"no successful run since {since} (last: {last.status})"
        return Alarm(name, reason, first_bad.started)
    return None


def _misconfigured(records: list[RunRecord]) -> Alarm:
    """A broken setup needs a person from its first run on (status only: the run itself
    exits 78 with the cause), and until the next run that is not broken (issue 47)."""
    last = records[-1]
    broken = list(takewhile(lambda r: r.store == MISCONFIGURED, reversed(records)))
    first = broken[-1]  # the oldest of the broken runs the last one ends (it is one itself)
    cause = last.error.removeprefix(SETUP_PREFIX) or "`memfuse doctor` names it"
    reason = (
        f"its store's setup is broken (exit 78 since {stamp(first.at)}): {cause}"
        " — the next run whose setup holds clears this"
    )
    return Alarm(last.command, reason, first.started)


def stamp(moment: datetime | str) -> str:
    """`2026-12-03 14:05 +01:00`: a moment to the minute, in its own zone (the run's clock)."""
    if isinstance(moment, str):
        try:
            moment = datetime.fromisoformat(moment)
        except ValueError:
            return str(moment)[:25]
    offset = moment.strftime("%z")  # +0100, or "" when the moment has no zone
    zone = f" {offset[:3]}:{offset[3:5]}" if offset else ""
    return moment.strftime("%Y-%m-%d %H:%M") + zone
