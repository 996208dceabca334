"""`memfuse surface`: RECENT.md from the store, or from the journals when the store is down.

Four independent reads (run concurrently), normalised into records, then ranked and rendered
by `memfuse.workspace.recent_md`. The file is replaced atomically; on any error the old one stays.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memfuse.errors import WorkspaceError
from memfuse.recall.reranking import recall_arguments, rerank_answer, reranking
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import SurfaceData
from memfuse.store.answers import memories_in
from memfuse.text.classify import Classifier
from memfuse.text.similarity import fold_whitespace
from memfuse.workspace.confine import UnsafePath
from memfuse.workspace.journals import list_journals, read_journal
from memfuse.workspace.recent_md import (
    Record,
    choose,
    journal_moment,
    section_counts,
    section_moment,
)
from memfuse.workspace.recent_md import render as recent_md

RECALL_QUERY = "最近重要的事 情感 决策"
RECALL_LIMIT = 30
PREFIX_KEEP = {"knowledge://": 20, "emotion://": 10}
EVENTS_PREFIX = "event://journal/"


def _records(answer: dict[str, Any] | None, now: datetime) -> list[Record]:
    """The answer's memories as records, a journal memory dated by its URI."""
    return [
        Record(
            content=m.content,
            type=m.type or "knowledge",
            id=m.id,
            uri=m.uri,
            vitality=m.vitality,
            when=journal_moment(m.uri, now.tzinfo) or m.updated_at,
        )
        for m in memories_in(answer, now.tzinfo)
    ]


def _newest(records: list[Record], keep: int) -> list[Record]:
    """recall_path has no limit argument: cap client-side, most recent first, timeless last."""
    dated = sorted((r for r in records if r.when is not None), key=_when, reverse=True)
    return (dated + [r for r in records if r.when is None])[:keep]


def _when(record: Record) -> datetime:
    assert record.when is not None
    return record.when


def from_store(ctx: RunContext) -> list[Record]:
    now = ctx.settings.now
    rerank = reranking(ctx, ctx.settings.rerank.surface)
    answers = ctx.guard.call_many(
        [
            ("recall", recall_arguments(RECALL_QUERY, RECALL_LIMIT, rerank=rerank)),
            ("recall_path", {"uri": "knowledge://"}),
            ("recall_path", {"uri": "emotion://"}),
            ("recall_path", {"uri": EVENTS_PREFIX}),
        ]
    )
    recalled = _records(
        rerank_answer(ctx, RECALL_QUERY, answers[0], RECALL_LIMIT, rerank=rerank), now
    )
    listings = answers[1:]
    knowledge, emotion, events = (_records(a, now) for a in listings)
    recalled = _with_journal_dates(recalled, [*knowledge, *emotion, *events])
    window_start = now - timedelta(days=ctx.settings.surface.window_days)
    return [
        *recalled,
        *_newest(knowledge, PREFIX_KEEP["knowledge://"]),
        *_newest(emotion, PREFIX_KEEP["emotion://"]),
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
    classifier = Classifier(s.knowledge_keywords, s.emotion_keywords)
    today = s.now.date()
    first = today - timedelta(days=s.surface.fallback_days - 1)
    records: list[Record] = []
    in_window = {d: p for d, p in list_journals(s.workspace).items() if first <= d <= today}
    if not in_window:
        ctx.reporter.warn(
            f"no journal in the last {s.surface.fallback_days} day(s)"
            f" ({first.isoformat()}..{today.isoformat()}) to fall back on"
        )
    for day, path in sorted(in_window.items(), reverse=True):
        try:
            parsed = read_journal(ctx.files, path, ctx.reporter.warn)
        except FileNotFoundError:
            continue
        if parsed is None:
            continue
        for bullet in sorted(parsed.bullets, key=lambda b: (b.key, b.n), reverse=True):
            when = section_moment(day, bullet.key, s.now.tzinfo)
            # Journal order is the ranking here: newer sections first, all equally vital.
            records.append(
                Record(bullet.text, classifier.classify(bullet.text).type, vitality=1.0, when=when)
            )
    return records


def _has_entries(ctx: RunContext, path: Path) -> bool:
    """Whether RECENT.md exists and holds at least one entry (worth keeping over an empty one)."""
    try:
        old = ctx.files.read(path).decode("utf-8", errors="replace")
    except (OSError, WorkspaceError):
        return False
    return any(section_counts(old).values())


def _kept(path: Path) -> CommandResult:
    data: SurfaceData = {
        "source": "kept", "path": str(path), "dry_run": False, "target": str(path), "kept": True
    }  # fmt: skip
    return CommandResult("surface", data, tuple(render.surface(data)))


def run(ctx: RunContext, *, to_stdout: bool = False) -> CommandResult:
    s = ctx.settings
    budget = s.surface
    source = "agent-memory"
    sections = choose(from_store(ctx), s.now, budget)
    if not any(sections.values()):
        source = "journals"
        ctx.reporter.warn("agent-memory gave nothing usable; RECENT.md is built from the journals")
        sections = choose(from_journals(ctx), s.now, budget)
    text = recent_md(sections, s.now.astimezone(), budget)
    lines = text.count("\n")
    path = None if to_stdout or ctx.dry_run else s.workspace / "RECENT.md"
    if path is not None and not any(sections.values()) and _has_entries(ctx, path):
        ctx.reporter.warn(
            "the store and the journals gave nothing to surface: the existing RECENT.md is kept"
        )
        return _kept(path)
    if path is not None:
        try:
            ctx.files.write(path, text.encode("utf-8"))
        except UnsafePath as exc:
            raise UnsafePath(f"{exc}; RECENT.md is not written, its target is untouched") from None
        except OSError as exc:
            raise WorkspaceError(
                f"cannot write {path}: {exc.strerror or exc}; the previous RECENT.md is unchanged"
            ) from None
    data: SurfaceData = {
        "source": source,
        "path": str(path) if path else None,
        "dry_run": ctx.dry_run,
        "target": str(s.workspace / "RECENT.md"),
        "lines": lines,
        "sections": section_counts(text),
    }
    if to_stdout:
        data["text"] = text
        return CommandResult("surface", data, payload=text.rstrip("\n"))
    return CommandResult("surface", data, tuple(render.surface(data)))
