"""`memfuse surface`: RECENT.md from the store, or from the journals when the store is down:
read, plan, write (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from operator import attrgetter
from pathlib import Path

from memfuse.confine import UnsafePath
from memfuse.errors import WorkspaceError
from memfuse.recall.reranking import candidates
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import SurfaceData
from memfuse.settings import Budget
from memfuse.store.answers import StoredMemory
from memfuse.text.similarity import fold_whitespace
from memfuse.workspace.position import JournalPosition
from memfuse.workspace.recent_keep import keep_foreign, note_written
from memfuse.workspace.recent_md import Record, choose, section_counts
from memfuse.workspace.recent_md import render as recent_md

EVENTS_PREFIX = "event://journal/"


def _records(memories: list[StoredMemory] | None, now: datetime) -> list[Record]:
    """The memories as records, a journal memory dated by its URI."""
    records = []
    for m in memories or ():
        position = JournalPosition.parse(m.uri)
        when = position.moment(now.tzinfo) if position is not None else m.updated_at
        records.append(Record(m.content, m.type, m.id, m.uri, m.vitality, when))
    return records


def _newest(records: list[Record], keep: int) -> list[Record]:
    """recall_path has no limit argument: cap client-side, most recent first, timeless last."""
    dated = sorted((r for r in records if r.when is not None), key=attrgetter("when"), reverse=True)
    return (dated + [r for r in records if r.when is None])[:keep]


def from_store(ctx: RunContext) -> list[Record]:
    now = ctx.settings.now
    store = ctx.store
    ask = ctx.settings.surface  # the query and its limits ([surface] in the config)
    rerank = ctx.reranking.wanted(ctx.settings.rerank.surface)
    asked = candidates(ask.recall_limit, rerank=rerank)
    answers = store.concurrently(
        lambda: store.recall(ask.query, asked),
        lambda: store.listing("knowledge://"),
        lambda: store.listing("emotion://"),
        lambda: store.listing(EVENTS_PREFIX),
    )
    best = ctx.reranking.recalled(ask.query, answers[0], ask.recall_limit, rerank=rerank)
    recalled = _records(best, now)
    knowledge, emotion, events = (_records(a, now) for a in answers[1:])
    recalled = _with_journal_dates(recalled, [*knowledge, *emotion, *events])
    window_start = now - timedelta(days=ctx.settings.surface.window_days)
    return [
        *recalled,
        *_newest(knowledge, ask.knowledge_listed),
        *_newest(emotion, ask.emotion_listed),
        *(r for r in events if r.when is not None and r.when >= window_start),
    ]


def _with_journal_dates(recalled: list[Record], listed: list[Record]) -> list[Record]:
    """recall answers carry no URI, only when the store last wrote the memory; after a backfill
    that is today for every old bullet. A recalled memory whose text is a listed journal
    memory's takes that memory's URI and journal date instead."""
    by_text = {fold_whitespace(r.content): r for r in listed if r.uri}
    out = []
    for record in recalled:
        twin = by_text.get(fold_whitespace(record.content))
        out.append(replace(record, uri=twin.uri, when=twin.when) if twin else record)
    return out


def from_journals(ctx: RunContext) -> list[Record]:
    """The fallback: the last few days of journals, classified, newest first."""
    s = ctx.settings
    today = s.now.date()
    first = today - timedelta(days=s.surface.fallback_days - 1)
    window = ctx.workspace.window(first, today)
    if not window:
        ctx.reporter.warn(
            f"no journal in the last {s.surface.fallback_days} day(s)"
            f" ({first.isoformat()}..{today.isoformat()}) to fall back on"
        )
    # Journal order is the ranking here, newest first: later days, later sections, later
    # bullets, all equally vital.
    positioned = [
        (position, bullet)
        for journal in ctx.workspace.journals(window, ctx.reporter.warn)
        for position, bullet in journal.positioned()
    ]
    return [
        Record(b.text, ctx.classifier.classify(b.text).type, vitality=1.0,
               when=position.moment(s.now.tzinfo))
        for position, b in sorted(positioned, key=lambda pb: pb[0], reverse=True)
    ]  # fmt: skip


@dataclass(frozen=True)
class SurfaceReading:
    """What surface read: the store's records, the journals' (None: not needed, the store
    gave something usable) and the RECENT.md there now (None: not needed or not there)."""

    stored: Sequence[Record]
    journal: Sequence[Record] | None = None
    old: str | None = None


@dataclass(frozen=True)
class SurfacePlan:
    """What RECENT.md will hold: its text, where it came from (agent-memory or journals), and
    whether the old file is kept instead (nothing to surface, and it holds entries)."""

    source: str
    text: str
    keep_old: bool = False


def usable(records: Sequence[Record], now: datetime, budget: Budget) -> bool:
    """Whether these records give RECENT.md at least one entry (pure)."""
    return any(choose(records, now, budget).values())


def plan(reading: SurfaceReading, now: datetime, budget: Budget) -> SurfacePlan:
    """What RECENT.md holds under its budgets (pure): the store's records, else the journals';
    when neither gives an entry, an empty file only if the old one held none either."""
    source, sections = "agent-memory", choose(reading.stored, now, budget)
    if not any(sections.values()) and reading.journal is not None:
        source, sections = "journals", choose(reading.journal, now, budget)
    text = recent_md(sections, now.astimezone(), budget)
    old = reading.old
    keep = not any(sections.values()) and old is not None and any(section_counts(old).values())
    return SurfacePlan(source, text, keep)


def read(ctx: RunContext, *, writing: bool) -> SurfaceReading:
    """The store's records; the journals only when those give nothing; the old RECENT.md only
    when a file is to be written and nothing else is left to write."""
    s = ctx.settings
    stored = from_store(ctx)
    if usable(stored, s.now, s.surface):
        return SurfaceReading(stored)
    ctx.reporter.warn("agent-memory gave nothing usable; RECENT.md is built from the journals")
    journal = from_journals(ctx)
    if not writing or usable(journal, s.now, s.surface):
        return SurfaceReading(stored, journal)
    return SurfaceReading(stored, journal, _old_text(ctx, ctx.workspace.recent_md))


def _old_text(ctx: RunContext, path: Path) -> str | None:
    """RECENT.md as it is now, or None when it cannot be read (worth keeping only if it can)."""
    try:
        return ctx.workspace.files.read(path, own=True).decode("utf-8", errors="replace")
    except (OSError, WorkspaceError):
        return None


def _kept(path: Path) -> CommandResult:
    data: SurfaceData = {
        "source": "kept", "path": str(path), "dry_run": False, "target": str(path), "kept": True
    }  # fmt: skip
    return CommandResult("surface", data, tuple(render.surface(data)))


def run(ctx: RunContext, *, to_stdout: bool = False) -> CommandResult:
    ctx.embed_afterwards()  # what the sync before it left without a vector
    s = ctx.settings
    target = ctx.workspace.recent_md
    path = None if to_stdout or ctx.dry_run else target
    the_plan = plan(read(ctx, writing=path is not None), s.now, s.surface)
    if path is not None and the_plan.keep_old:
        ctx.reporter.warn(
            "the store and the journals gave nothing to surface: the existing RECENT.md is kept"
        )
        return _kept(path)
    text = the_plan.text
    kept = None
    if path is not None:
        kept = keep_foreign(ctx.workspace, path, text, ctx.settings.now, ctx.reporter.warn)
        _write(ctx, path, text)
        note_written(ctx.workspace.state, text, ctx.reporter.warn)
    data: SurfaceData = {
        "source": the_plan.source,
        "path": str(path) if path else None,
        "dry_run": ctx.dry_run,
        "target": str(target),
        "lines": text.count("\n"),
        "sections": section_counts(text),
    }
    if kept is not None:
        data["user_lines"] = {"count": kept.count, "copy": str(kept.copy)}
    if to_stdout:
        data["text"] = text
        return CommandResult("surface", data, payload=text.rstrip("\n"))
    return CommandResult("surface", data, tuple(render.surface(data)))


def _write(ctx: RunContext, path: Path, text: str) -> None:
    """Replace RECENT.md atomically; on any error the previous file stays as it was."""
    try:
        ctx.workspace.files.write(path, text.encode("utf-8"))
    except UnsafePath as exc:
        raise UnsafePath(f"{exc}; RECENT.md is not written, its target is untouched") from None
    except OSError as exc:
        raise WorkspaceError(
            f"cannot write {path}: {exc.strerror or exc}; the previous RECENT.md is unchanged"
        ) from None
