"""`memfuse sync`: journal bullets into agent-memory, one memory per bullet.

A run reads, plans, then acts. Reading: one `status` call (is the store there? does it look
reset?), the journals in scope, their bullets classified and set against the ledger. Planning
(`plan`, a pure function of what was read): what to send (new or changed, or pending), what is
unchanged, what is stale (gone from its journal) and, with `--prune`, dropped — and what to
send again afterwards: the bullets the store keeps in one memory with a bullet sent or pruned
(agent-memory answers an exact duplicate `skipped` and folds a near one into an existing
memory, `merged`), whose text the change would otherwise take out of the store. Acting: the
plan's calls, concurrently, each outcome recorded the moment it arrives; `--dry-run` shows the
plan instead.

A plain `memfuse sync` reads what changed: every journal file — daily, archived or weekly
roll-up — whose size, times or inode differ from when a run last covered it, and the
days of every bullet still pending (a failed call, a memory the store lost). A year of
untouched journals costs a `stat` each: no parse, no store call. `--date`, `--days`, `--since`
and `--all` name the days instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path

from memfuse.ledger.folds import Refold, plan_folds
from memfuse.ledger.ledger import Entry, Ledger, Stamp, content_hash, paused_since
from memfuse.ledger.reconcile import Report, verify_index
from memfuse.ledger.refolds import refold_writes, send_refolds
from memfuse.recall.index import refresh_index
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import PrunedRow, RejectedRow, SyncData
from memfuse.store.answers import StoreStatus
from memfuse.store.client import NewMemory
from memfuse.text.classify import Verdict
from memfuse.workspace.journal import Bullet
from memfuse.workspace.layout import Journal
from memfuse.workspace.position import JOURNAL_PREFIXES, SOURCE_PREFIX, JournalPosition

COUNT_KEYS = (
    "added", "updated", "merged", "skipped", "rejected", "failed", "unchanged", "stale",
    "restored",
)  # fmt: skip


@dataclass(frozen=True)
class Scope:
    """Which journals to read: what changed (the default), one day, a range ending today, or
    all of them."""

    day: date | None = None
    since: date | None = None
    days: int | None = None
    all: bool = False

    @property
    def plain(self) -> bool:
        return not (self.all or self.day or self.since or self.days)

    def select(self, available: list[date], today: date) -> list[date]:
        if self.all:
            return available
        if self.day is not None:
            return [self.day]
        start = self.since or today - timedelta(days=(self.days or 1) - 1)
        return [d for d in available if start <= d <= today]


@dataclass(frozen=True)
class Item:
    """One bullet and what the ledger knows of its position."""

    position: JournalPosition
    bullet: Bullet
    verdict: Verdict
    digest: str
    previous: Entry | None

    @property
    def day(self) -> str:
        return self.position.day.isoformat()

    @property
    def memory_type(self) -> str:
        pinned = self.previous.memory_type if self.previous and self.previous.uri else None
        return pinned or self.verdict.type

    @property
    def uri(self) -> str:
        if self.previous is not None and self.previous.uri:
            return self.previous.uri
        return self.position.uri(self.verdict.type)

    @property
    def unchanged(self) -> bool:
        p = self.previous
        return p is not None and p.settles(self.digest)

    def memory(self) -> NewMemory:
        return NewMemory(self.bullet.text, self.memory_type, self.uri, self.position.source)


@dataclass
class Reading:
    """What a run read: the days, their bullets as items, the ledger entries whose bullet is
    gone, and the files read (with the size and time they had), by the day they hold."""

    days: list[str]
    items: list[Item]
    stale: dict[str, Entry]
    files: dict[str, list[tuple[str, Stamp]]]  # by day: its files' locations and stamps when read
    unreadable: dict[str, str] = field(default_factory=dict)  # location -> why
    partial: set[str] = field(default_factory=set)  # days with a form that could not be read
    holds: dict[str, set[str]] = field(default_factory=dict)  # location -> the days it is a form of


@dataclass(frozen=True)
class Plan:
    """What a sync will do, decided before any call that changes the store."""

    send: tuple[Item, ...]  # new, changed or pending bullets
    unchanged: int
    stale: dict[str, Entry]  # ledger entries whose bullet is gone from its journal
    prune: tuple[Entry, ...]  # of those, what --prune drops
    resend: tuple[Item, ...]  # unchanged bullets sharing a memory with one sent or pruned
    paused: str | None
    # shared memories memfuse made whose members' text changed: each rewritten once, at the
    # URI of the bullet that made it, with its members' texts now (memfuse.ledger.folds)
    refold: tuple[Refold, ...] = ()

    def as_dict(self) -> dict[str, list[str] | int | str | None]:
        return {
            "send": [i.position.key for i in self.send],
            "unchanged": self.unchanged,
            "stale": sorted(self.stale),
            "prune": [e.position for e in self.prune],
            "resend": [i.position.key for i in self.resend],
            "refold": [r.anchor.position for r in self.refold],
            "paused": self.paused,
        }


def touched(reading: Reading, *, prune: bool) -> set[str]:
    """The memories a plan may change: those of the bullets to send, and with `prune` those of
    the stale bullets memfuse created (pure)."""
    ids = {i.previous.memory_id for i in reading.items if not i.unchanged and i.previous}
    if prune:
        ids |= {e.memory_id for e in reading.stale.values() if e.created}
    return {i for i in ids if i}


def plan(
    reading: Reading,
    sharing: Mapping[str, Sequence[Entry]],
    *,
    paused: str | None,
    prune: bool,
) -> Plan:
    """What to do about what was read (pure). `sharing`: the ledger entries of each memory
    `touched` names. A bullet that shares a memory with one sent (its memory rewritten) or
    pruned (its memory deleted) is sent again after them, as its own memory if the store now
    takes it as one: editing or deleting one bullet never takes another's text out."""
    if paused:
        return Plan((), 0, dict(reading.stale), (), (), paused)
    send = tuple(i for i in reading.items if not i.unchanged)
    dropped = tuple(e for _, e in sorted(reading.stale.items())) if prune else ()
    changed = {i.position.key for i in send} | set(reading.stale)
    # A memory memfuse made that a changed bullet shares is refolded: written once with its
    # members' texts now, its exact duplicates that changed sent on their own; no other
    # member is sent again (memfuse.ledger.folds). The rest are sent again after the change.
    edited = {i.previous.memory_id for i in send if i.previous and i.previous.memory_id}
    texts: dict[str, tuple[str, str] | None] = dict.fromkeys(reading.stale)
    texts.update((i.position.key, (i.bullet.text, i.digest)) for i in reading.items)
    folds = plan_folds({m: sharing[m] for m in sorted(edited) if m in sharing}, texts)
    refolds = tuple(f.refold for f in folds.values() if f.refold is not None)
    stored = {m.entry.position for r in refolds for m in r.carries}
    send = tuple(i for i in send if i.position.key not in stored)
    ids = {i.previous.memory_id for i in send if i.previous} - folds.keys()
    ids |= {e.memory_id for e in dropped if e.created}
    by_position = {i.position.key: i for i in reading.items}
    resend: dict[str, Item] = {}
    for memory_id in sorted(i for i in ids if i):
        for entry in sharing.get(memory_id, ()):
            item = by_position.get(entry.position)
            if entry.position not in changed and item is not None:
                resend.setdefault(entry.position, item)
    return Plan(
        send, len(reading.items) - len(send) - len(stored), dict(reading.stale), dropped,
        tuple(resend.values()), None, refolds,
    )  # fmt: skip


def _stat(path: Path) -> Stamp | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


def in_scope(
    ctx: RunContext, scope: Scope, ledger: Ledger | None
) -> tuple[list[date], dict[str, Stamp], dict[str, set[str]]]:
    """The days to read, the stamp of each journal file now, and the days each is a form of,
    by location."""
    workspace = ctx.workspace
    sources = workspace.sources()
    where = {day: {workspace.location(f.path) for f in forms} for day, forms in sources.items()}
    now = {
        loc: found for loc in set().union(*where.values()) if (found := _stat(workspace.root / loc))
    }
    if scope.plain:
        covered = ledger.covered() if ledger is not None else {}
        chosen = {
            day for day, locs in where.items() if any(covered.get(x) != now.get(x) for x in locs)
        }
    else:
        chosen = set(scope.select(list(sources), ctx.settings.now.date()))
    if ledger is not None:  # what is still pending, whatever its day: lost, or a failed call
        pending = [
            *ledger.positions_with("lost"),  # the store lost them: re-sent
            *ledger.positions_with("resumed"),  # a rollback undone: sent again
            *(p for p, _attempt in ledger.pending()),  # their last call failed
        ]
        chosen |= {pos.day for pos in map(JournalPosition.parse, pending) if pos} & set(sources)
    holds: dict[str, set[str]] = {}
    for day, locs in where.items():
        for loc in locs:
            holds.setdefault(loc, set()).add(day.isoformat())
    return sorted(chosen), now, holds


def read_items(
    ctx: RunContext, scope: Scope, ledger: Ledger | None, journals: Mapping[date, Journal]
) -> Reading:
    """Every bullet of the days in scope, as items against the ledger."""
    workspace = ctx.workspace
    days, now, holds = in_scope(ctx, scope, ledger)
    named = ctx.reporter.warn if scope.day is not None else None
    for name in workspace.look_alikes():
        ctx.reporter.warn(
            f"{name!r} reads like a journal but is not one (a journal is named YYYY-MM-DD.md in"
            " ASCII digits, a real date from 1900 to 2999): not synced"
        )
    reading = Reading([], [], {}, {}, holds=holds)
    read_days(ctx, reading, days, now, ledger, missing=named, journals=journals)
    return reading


def read_days(
    ctx: RunContext,
    reading: Reading,
    days: Iterable[date],
    now: Mapping[str, Stamp],
    ledger: Ledger | None,
    *,
    missing: Callable[[str], None] | None = None,
    journals: Mapping[date, Journal] | None = None,
) -> None:
    """Add the bullets of these days to what a run read (`journals`: days already read)."""
    workspace = ctx.workspace

    def unreadable(path: Path, why: str) -> None:
        reading.unreadable[workspace.location(path)] = why

    def passed(day: date, path: Path) -> None:
        """Note a file read for the day, with its stamp when read; a roll-up that holds
        nothing of the day is told here too, settled like any journal read."""
        where = workspace.location(path)
        files = reading.files.setdefault(day.isoformat(), [])
        found = now.get(where) or _stat(path)
        if found is not None and (where, found) not in files:
            files.append((where, found))

    for journal in workspace.journals(
        days, ctx.reporter.warn, missing=missing, unreadable=unreadable, read=journals,
        passed=passed,
    ):  # fmt: skip
        iso = journal.day.isoformat()
        reading.days.append(iso)
        for path in journal.read:
            passed(journal.day, path)
        if not journal.complete:
            reading.partial.add(iso)
        known = ledger.entries_for([iso]) if ledger is not None else {}
        for position, bullet in journal.positioned():
            verdict = ctx.classifier.classify(bullet.text)
            digest = content_hash(bullet.text)
            reading.items.append(
                Item(position, bullet, verdict, digest, known.pop(position.key, None))
            )
        if journal.complete:  # a form not read may hold the rest: nothing is taken for gone
            reading.stale.update(known)


def run(
    ctx: RunContext,
    scope: Scope,
    *,
    prune: bool = False,
    explain: bool = False,
    verify: bool = False,
) -> CommandResult:
    s = ctx.settings
    workspace = ctx.workspace
    counts = dict.fromkeys(COUNT_KEYS, 0)
    existing = workspace.state.ledger.exists()
    ledger = ctx.ledger if not ctx.dry_run or existing else None
    # A rollback's pause lives in its own state file, not in the ledger (an old ledger's
    # is moved there when it is opened): a ledger lost or set aside must not undo it.
    paused = paused_since(workspace.state)
    # One cheap read first, alone: it tells a reachable store from a dead one even when
    # nothing changed (the run history needs that), and whether the index looks reset.
    probe = ctx.store.status()
    fresh = ledger is not None and ledger.fresh and not paused and _holds_any(probe)
    rebuilt = rebuild(ctx, ledger) if fresh and ledger is not None else None
    report: Report | None = None
    journals: dict[date, Journal] = {}
    if ledger is not None and not paused and (verify or _looks_reset(probe, ledger)):
        report, journals = _verify(ctx, ledger)
    reading, the_plan = read_and_plan(
        ctx, scope, ledger, paused=paused, prune=prune, journals=journals
    )
    counts["unchanged"] = the_plan.unchanged
    counts["stale"] = len(reading.stale)
    data: SyncData = {
        "dry_run": ctx.dry_run, "counts": counts, "dates": reading.days, "calls": 0,
        "stale": [], "rejected": [], "pruned": [], "scope": _scope_name(scope),
        "plan": the_plan.as_dict(),
    }  # fmt: skip
    if paused:
        data["paused_since"] = paused
        ctx.reporter.warn(
            f"sync is rolled back since {paused}: nothing is sent until `memfuse rollback --undo`"
        )
    today = workspace.journal_path(s.now.date())
    if not reading.days and not today.exists():
        data["today_journal"] = str(today)
    if rebuilt:
        data["rebuilt"] = rebuilt
    if report is not None:
        data["index"] = report.as_dict()
        data["index_line"] = report.line()
    if explain:
        data["explain"] = [
            {"position": i.position.key, "type": i.verdict.type, "keyword": i.verdict.keyword,
             "uri": i.uri, "text": i.bullet.text}
            for i in reading.items
        ]  # fmt: skip
    if ctx.dry_run:
        data["would_send"] = [
            dict(m.arguments()) for m in refold_writes(ctx.store, the_plan.refold)
        ] + [dict(item.memory().arguments()) for item in the_plan.send + the_plan.resend]
        data["calls"] = ctx.calls_made
        return _result(data, reading.stale, rejected=[], pruned=[])
    assert ledger is not None
    rejected, failed_days, pruned = apply(ctx, ledger, the_plan, counts)
    data["resent"] = len(the_plan.resend)
    data["refolded"] = len(the_plan.refold)
    counts["stale"] = len(reading.stale) - len(pruned)
    at = s.now.isoformat(timespec="seconds")
    if not paused:
        _cover(ledger, reading, failed_days, at)
    _note_unreadable(ctx, ledger, reading, at)
    if report is not None and report.lost:
        data["lost_left"] = len(ledger.positions_with("lost"))
    data["calls"] = ctx.calls_made
    # The Markdown side of recall, kept current where the journals are read anyway.
    data["recall_index_refreshed"] = refresh_index(workspace, ctx.classifier, ctx.reporter.warn)
    return _result(data, reading.stale, rejected, pruned)


def read_and_plan(
    ctx: RunContext,
    scope: Scope,
    ledger: Ledger | None,
    *,
    paused: str | None,
    prune: bool,
    journals: Mapping[date, Journal] | None = None,
) -> tuple[Reading, Plan]:
    """Read the journals in scope (`journals`: those already read this run) and what the plan
    needs besides (the ids of memories a rebuilt ledger does not know, the bullets sharing a
    memory with a change), then plan."""
    reading = read_items(ctx, scope, ledger, journals or {})
    sharing: dict[str, list[Entry]] = {}
    if ledger is not None and not paused:
        reading = _with_memory_ids(ctx, ledger, reading, prune=prune)
        sharing = ledger.sharing(touched(reading, prune=prune))
        _read_siblings(ctx, reading, sharing, ledger)
    return reading, plan(reading, sharing, paused=paused, prune=prune)


def apply(
    ctx: RunContext, ledger: Ledger, the_plan: Plan, counts: dict[str, int]
) -> tuple[list[RejectedRow], set[str], list[PrunedRow]]:
    """Carry out a plan: send, prune, then send again what shared a memory with either. The
    rejected bullets, the days with a failed call (their files are read again next run), and
    what was pruned. Shared memories are refolded first: a bullet sent after may be folded
    into one of them again."""
    now = ctx.settings.now.isoformat(timespec="seconds")
    failed_days = send_refolds(ctx.store, ledger, the_plan.refold, counts, now)
    rejected, failed = _send(ctx, ledger, list(the_plan.send), counts)
    failed_days |= failed
    pruned = _prune(ctx, ledger, the_plan.prune)
    if the_plan.resend:
        more, failed = _send(ctx, ledger, list(the_plan.resend), counts)
        rejected += more
        failed_days |= failed
    return rejected, failed_days, pruned


def rebuild(ctx: RunContext, ledger: Ledger) -> int:
    """A ledger made afresh (none was there, or it was set aside) takes back what the store
    holds at memfuse's journal URIs with the text each holds, so that the sync sends only what
    differs, not every bullet again. Their ids are asked for when a bullet is changed or pruned
    (`_with_memory_ids`); how many entries were taken back."""
    memories = ctx.store.memories_under(JOURNAL_PREFIXES)
    if memories is None:
        ctx.reporter.warn("the store's journal memories could not be listed: nothing rebuilt")
        return 0
    at = ctx.settings.now.isoformat(timespec="seconds")
    entries = []
    for memory in memories:
        position = JournalPosition.parse(memory.uri)
        if position is None or memory.uri != position.uri(memory.type):
            continue
        entries.append(
            Entry(position.key, position.day.isoformat(), content_hash(memory.content.strip()),
                  "added", memory.uri, memory.type, None, created=False, synced_at=at)
        )  # fmt: skip
    taken = ledger.adopt(entries)
    if taken:
        ctx.reporter.info(f"the sync ledger was rebuilt from the store: {taken} memories")
    return taken


def _with_memory_ids(ctx: RunContext, ledger: Ledger, reading: Reading, *, prune: bool) -> Reading:
    """Entries taken back by `rebuild` know a URI but not the memory's id: the ones this run
    may change are looked up (one call each), so that bullets sharing their memory are found
    and only memfuse's own memories are ever deleted."""
    unknown = [
        i.previous for i in reading.items
        if not i.unchanged and i.previous and not i.previous.memory_id and i.previous.uri
    ]  # fmt: skip
    if prune:
        unknown += [e for e in reading.stale.values() if not e.memory_id and e.uri]
    if not unknown:
        return reading
    known: dict[str, Entry] = {}
    for entry in unknown:
        found = ctx.store.lookup(str(entry.uri))
        if found is None or not found.id:
            continue
        ours = (found.source or "").startswith(SOURCE_PREFIX)
        known[entry.position] = replace(entry, memory_id=found.id, created=ours)
        ledger.record(known[entry.position], entry.synced_at)
    items = [
        replace(i, previous=known[i.position.key]) if i.position.key in known else i
        for i in reading.items
    ]
    stale = {p: known.get(p, e) for p, e in reading.stale.items()}
    return replace(reading, items=items, stale=stale)


def _verify(ctx: RunContext, ledger: Ledger) -> tuple[Report | None, dict[date, Journal]]:
    """Check the store against the ledger and every bullet's text now; every journal is read
    for that, and handed on so that the sync after it does not read one twice."""
    workspace = ctx.workspace
    journals = {j.day: j for j in workspace.journals(workspace.sources(), ctx.reporter.warn)}
    texts = {p.key: b.text for j in journals.values() for p, b in j.positioned()}
    report = verify_index(ctx.store, ledger, ctx.settings.now, ctx.reporter,
                          mark=not ctx.dry_run, texts=texts)  # fmt: skip
    return report, journals


def _read_siblings(
    ctx: RunContext, reading: Reading, sharing: Mapping[str, Sequence[Entry]], ledger: Ledger
) -> None:
    """Read the days of the bullets that share a memory with one this run may change, when
    they are not read already: the plan needs their text to send them again."""
    read = set(reading.days)
    wanted = {
        pos.day
        for entries in sharing.values()
        for e in entries
        if e.day not in read and (pos := JournalPosition.parse(e.position)) is not None
    }
    if wanted:
        read_days(ctx, reading, sorted(wanted), {}, ledger)


def _scope_name(scope: Scope) -> str:
    """What the run was asked to read, in the words of its option."""
    if scope.plain:
        return "changed"
    if scope.all:
        return "all"
    if scope.day is not None:
        return f"date {scope.day}"
    return f"since {scope.since}" if scope.since else f"days {scope.days}"


def _note_unreadable(ctx: RunContext, ledger: Ledger, reading: Reading, at: str) -> None:
    """Keep the journals that could not be read on record (an alarm in `status`), and clear
    those read since or gone."""
    workspace = ctx.workspace
    gone = [p for p in ledger.unreadable_paths() if not os.path.lexists(workspace.root / p)]
    # a roll-up read with a section outside its week stays on record until read without it
    misplaced = {workspace.location(p): why for p, why in workspace.misplaced.items()}
    found = {**misplaced, **reading.unreadable}
    read = [file[0] for files in reading.files.values() for file in files if file[0] not in found]
    ledger.note_unreadable(found, read, gone, at)


def _cover(ledger: Ledger, reading: Reading, failed_days: set[str], at: str) -> None:
    """Note each file read whose bullets all settled: the next plain sync passes over it until
    it changes. The files of a day with a failed call, or one of whose forms could not be
    read, are left out (a roll-up holds seven days: one such day leaves it out), and so is a
    roll-up some of whose days this run did not read (`--date`, `--days`): the next run
    reads them again."""
    again = failed_days | reading.partial
    done = [file for day, files in reading.files.items() if day not in again for file in files]
    undone = {file[0] for day, files in reading.files.items() if day in again for file in files}
    undone |= {
        loc for loc, _stamp in done if not reading.holds.get(loc, set()) <= reading.files.keys()
    }
    ledger.cover([file for file in done if file[0] not in undone], at)
    ledger.uncover(sorted(undone))


def _send(
    ctx: RunContext, ledger: Ledger, todo: list[Item], counts: dict[str, int]
) -> tuple[list[RejectedRow], set[str]]:
    """Remember each item concurrently; record every outcome, and every attempt, the moment it
    arrives. The rejected bullets, and the days with a failed call."""
    rejected: list[RejectedRow] = []
    failed_days: set[str] = set()
    now = ctx.settings.now.isoformat(timespec="seconds")
    with ctx.progress("sync", len(todo)) as advance:
        for index, outcome in ctx.store.remember_all([item.memory() for item in todo]):
            item = todo[index]
            action = outcome.action
            lost = item.previous is not None and item.previous.outcome == "lost"
            counts["restored" if lost and action != "failed" else action] += 1
            advance()
            key = item.position.key
            ledger.log_attempt(key, now, action, outcome.reason, outcome.memory_id, item.digest)
            if action == "failed":
                failed_days.add(item.day)
                continue  # not recorded: the next run retries it
            if action == "rejected":
                rejected.append({"position": key, "reason": outcome.reason})
            memory_id = outcome.memory_id
            ledger.record(
                Entry(
                    position=key,
                    day=item.day,
                    content_hash=item.digest,
                    outcome=action,
                    uri=item.uri if memory_id else None,
                    memory_type=item.memory_type if memory_id else None,
                    memory_id=memory_id,
                    created=_created(ctx, item, action, memory_id, ledger),
                ),
                now,
            )
    return rejected, failed_days


def _holds_any(probe: StoreStatus | None) -> bool:
    """Whether the store answered and may hold something (a first sync on an empty store has
    nothing to take back)."""
    return probe is not None and (probe.total is None or probe.total > 0)


def _looks_reset(probe: StoreStatus | None, ledger: Ledger) -> bool:
    """The cheap check: the store holds fewer memories than memfuse alone put there."""
    if probe is None or probe.total is None:
        return False
    return probe.total < ledger.expected_count()


def _created(
    ctx: RunContext, item: Item, outcome: str, memory_id: str | None, ledger: Ledger
) -> bool:
    """Whether memfuse itself made this memory, the only kind `--prune` may delete."""
    previous = item.previous
    if previous is not None and previous.created and previous.memory_id == memory_id:
        return True
    if outcome == "added":
        return True
    if outcome == "skipped" and memory_id and not ledger.made_elsewhere(memory_id, item.uri):
        # A run killed after the store added the memory but before the ledger recorded it: the
        # re-send is an exact duplicate of a memory sitting at our URI with our source.
        found = ctx.store.lookup(item.uri)
        return found is not None and found.id == memory_id and found.source == item.position.source
    return False


def _prune(ctx: RunContext, ledger: Ledger, stale: Sequence[Entry]) -> list[PrunedRow]:
    """Drop the stale entries; delete the memories memfuse created for them, unless a bullet
    still in a journal shares one now (a send of this run may have been answered `skipped`
    onto it): that memory is only released, its text kept."""
    dropping = {e.position for e in stale}
    shared = ledger.sharing({e.memory_id for e in stale if e.created and e.memory_id})
    pruned: list[PrunedRow] = []
    for entry in stale:
        position = entry.position
        others = [e for e in shared.get(entry.memory_id or "", ()) if e.position not in dropping]
        delete = entry.created and bool(entry.memory_id) and not others
        if delete and not ctx.store.forget(str(entry.memory_id)):
            continue  # kept in the ledger: the next --prune tries again
        ledger.forget(position)
        pruned.append({"position": position, "memory_id": entry.memory_id, "deleted": delete})
    return pruned


def _result(
    data: SyncData,
    stale: dict[str, Entry],
    rejected: list[RejectedRow],
    pruned: list[PrunedRow],
) -> CommandResult:
    pruned_positions = {p["position"] for p in pruned}
    data["stale"] = [
        {"position": p, "uri": e.uri, "memory_id": e.memory_id, "created_by_memfuse": e.created}
        for p, e in sorted(stale.items())
        if p not in pruned_positions
    ]
    data["rejected"] = rejected
    data["pruned"] = pruned
    return CommandResult("sync", data, tuple(render.sync(data)))
