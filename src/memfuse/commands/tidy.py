"""`memfuse tidy`: the 03:00 run — the store's sleep cycle, a MEMORY.md consistency check, its
backup and size guard, and (with --archive) the weekly journal roll-up."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path

from memfuse.confine import UnsafePath
from memfuse.errors import WorkspaceError
from memfuse.ledger.ledger import Entry, content_hash
from memfuse.ledger.reconcile import verify_index
from memfuse.ledger.stale import gone_from_journals, with_stale
from memfuse.recall.reranking import candidates
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import (
    ArchiveData,
    ArchivedRow,
    ConsistencyData,
    ConsistencyItem,
    MemoryMdData,
    RefusedRow,
    TidyData,
)
from memfuse.store.answers import Reflection
from memfuse.text.consistency import Finding, check
from memfuse.workspace.journal import decode
from memfuse.workspace.layout import Journal
from memfuse.workspace.memory_md import last_backup, memory_md_facts
from memfuse.workspace.rollup import roll_up

CONSISTENCY_QUERY = "当前最重要的事"
CONSISTENCY_LIMIT = 3


def consistency(ctx: RunContext, reflect_ok: bool, memory_md: bytes | None) -> ConsistencyData:
    s = ctx.settings
    reason = None
    if ctx.dry_run:
        reason = "dry run"
    elif not reflect_ok:
        reason = "reflect failed"
    elif memory_md is None:
        reason = "no MEMORY.md"
    rerank = ctx.reranking.wanted(s.rerank.tidy)
    memories = None
    if reason is None:
        asked = candidates(CONSISTENCY_LIMIT, rerank=rerank)
        recalled = ctx.store.recall(CONSISTENCY_QUERY, asked)
        memories = ctx.reranking.recalled(CONSISTENCY_QUERY, recalled, CONSISTENCY_LIMIT,
                                          rerank=rerank)  # fmt: skip
    if reason is None and memories is None:
        reason = "recall failed"
    if reason is None and not memories:
        reason = "nothing recalled"  # nothing was compared: not a vacuous OK
    if reason is not None:
        return {
            "status": "skipped",
            "reason": reason,
            "summary": f"consistency check: skipped ({reason})",
            "items": [],
        }
    assert memories is not None
    assert memory_md is not None
    text = decode(memory_md)[0]
    facts = memory_md_facts(text)
    findings = check(memories, facts, s.consistent_similarity, s.related_similarity)
    conflicts = sum(f.verdict == "conflict" for f in findings)
    linked = sum(f.verdict == "related" for f in findings)
    # Said for someone who has never read docs/operations.md: what was compared, what it found.
    summary = (
        f"consistency check: ⚠️ CONFLICT ({conflicts}) — recent memories that contradict a"
        " MEMORY.md line, each below with the line"
        if conflicts
        else f"consistency check: OK — {len(memories)} recent memor"
        f"{'y' if len(memories) == 1 else 'ies'} read against MEMORY.md, no contradiction"
    ) + (f"; {linked} add to something it already holds" if linked else "")
    return {
        "status": "conflict" if conflicts else "ok",
        "summary": summary,
        "items": [_item(f) for f in findings],
    }


def _item(f: Finding) -> ConsistencyItem:
    return {
        "memory": f.memory,
        "memory_id": f.memory_id,
        "memory_md_line": f.line,
        "line_no": f.line_no,
        "similarity": round(f.similarity, 3),
        "verdict": f.verdict,
        "why": f.why,
    }


def reflect(ctx: RunContext) -> Reflection | None:
    """The store's sleep cycle; None when it failed (or under --dry-run, which changes
    nothing). Servers ≥ 3.x answer it in Markdown: the prose is logged when it holds no counts."""
    if ctx.dry_run:
        return None
    reflection = ctx.store.reflect()
    if reflection is not None and reflection.counts is None and reflection.text is not None:
        ctx.reporter.info(f"reflect answered in prose: {reflection.text[:500]}")
    return reflection


def guard_memory_md(ctx: RunContext, raw: bytes | None) -> MemoryMdData:
    s = ctx.settings
    if raw is None:
        return {"exists": False, "lines": 0, "backup": None, "over_limit": False}
    text = decode(raw)[0]
    lines = len(text.splitlines())
    backup = ctx.workspace.memory_md_backup(s.now.date())
    made = False
    if not text.strip():
        # Emptied (by mistake, or by an agent told to): a backup of nothing is no backup.
        last = last_backup(ctx.workspace.archive_dir)
        ctx.reporter.warn(
            "MEMORY.md is empty: was it emptied by mistake? "
            + (f"its last backup with text is {last}" if last else "no backup holds its text")
        )
        return {"exists": True, "lines": lines, "backup": str(last) if last else None,
                "over_limit": False, "empty": True}  # fmt: skip
    if (backup.is_symlink() or not backup.is_file()) and not ctx.dry_run:  # a link is none
        try:
            ctx.workspace.files.write(backup, raw, create_parents=True)
            made = True
        except UnsafePath as exc:
            ctx.reporter.warn(f"MEMORY.md is not backed up: {exc}")
    over = lines > s.memory_md_max_lines
    if over:
        ctx.reporter.warn(
            f"MEMORY.md has {lines} lines, above the limit of {s.memory_md_max_lines}: distill it"
        )
    return {
        "exists": True,
        "lines": lines,
        "backup": str(backup) if backup.is_file() and not backup.is_symlink() else None,
        "backup_made": made,
        "over_limit": over,
    }


@dataclass(frozen=True)
class Archival:
    """One old daily, read, and what the roll-up makes of it."""

    day: date
    path: Path
    raw: bytes  # what was checked is what is rolled up
    unsynced: int | None  # bullets the ledger has not settled; None: their places are unknown


def unsynced(known: Mapping[str, Entry], journal: Journal | None, daily: Path) -> int | None:
    """Bullets of a daily whose current text the ledger (`known`: the day's entries) has not
    settled, at the positions the day's union gives them; None when the day could not be read
    as far as the daily."""
    if journal is None or daily not in journal.read:
        return None
    missing = 0
    for position, bullet, path in journal.located():
        if path != daily:
            continue
        entry = known.get(position.key)
        if entry is None or not entry.settles(content_hash(bullet.text)):
            missing += 1
    return missing


def read_old_dailies(ctx: RunContext) -> list[Archival]:
    """The dailies old enough to roll up, each read once and checked against the ledger."""
    s = ctx.settings
    workspace = ctx.workspace
    # the last `archive_after_days` days (today's included), the window surface shows, stay
    cutoff = s.now.date() - timedelta(days=s.archive_after_days - 1)
    old = {d: p for d, p in workspace.daily_journals().items() if d < cutoff}
    every_form = workspace.sources()
    ledger = ctx.ledger if workspace.state.ledger.exists() else None
    found: list[Archival] = []
    for day, path in sorted(old.items()):
        try:
            raw = workspace.files.read(path)
        except (UnsafePath, OSError) as exc:
            ctx.reporter.warn(f"not archiving {path.name}: {exc}")
            continue
        forms = every_form.get(day, ())
        journal = workspace.read_day(day, forms, ctx.reporter.warn, given={path: raw})
        known = ledger.entries_for([day.isoformat()]) if ledger is not None else {}
        found.append(Archival(day, path, raw, unsynced(known, journal, path)))
    return found


def archive(ctx: RunContext) -> ArchiveData:
    """Roll up the old dailies that are ready; name the others and why (`--dry-run`: plan)."""
    workspace = ctx.workspace
    done: list[ArchivedRow] = []
    refused: list[RefusedRow] = []
    for old in read_old_dailies(ctx):
        name, iso = old.path.name, old.day.isoformat()
        if old.unsynced is None:
            ctx.reporter.warn(f"not archiving {name}: an archived copy of its day cannot be read")
        elif old.unsynced:
            refused.append({"date": iso, "unsynced": old.unsynced})
            ctx.reporter.warn(f"not archiving {name}: {old.unsynced} bullet(s) not synced yet"
                              f" (run memfuse sync --date {iso})")  # fmt: skip
        elif ctx.dry_run:
            done.append({"date": iso, "weekly": str(workspace.weekly_path(old.day)),
                         "appended": None})  # fmt: skip
        else:
            try:
                rolled = roll_up(workspace, old.day, old.path, old.raw)
            except WorkspaceError as exc:  # a link out, a file where a folder should be
                ctx.reporter.warn(f"not archiving {name}: {exc}")
                continue
            done.append({"date": iso, "weekly": str(rolled.weekly),
                         "archived_to": str(rolled.archived_to),
                         "appended": rolled.appended})  # fmt: skip
    return {"archived": done, "refused": refused}


def run(ctx: RunContext, *, do_archive: bool = False) -> CommandResult:
    reflection = reflect(ctx)
    text = ctx.workspace.read_memory_md(ctx.reporter.warn)
    checked = consistency(ctx, reflection is not None, text)
    memory_md = guard_memory_md(ctx, text)
    status = ctx.store.status() if ctx.dry_run else None
    data: TidyData = {
        "dry_run": ctx.dry_run,
        "reflect": reflection.report if reflection is not None else None,
        "reflect_totals": reflection.totals if reflection is not None else None,
        "consistency": checked,
        "memory_md": memory_md,
        "status": asdict(status) if status is not None else None,
    }
    # Right after the store forgot: record what it forgot, mark what it lost for the next sync.
    if ctx.workspace.state.ledger.exists():
        index = verify_index(ctx.store, ctx.ledger, ctx.settings.now, ctx.reporter,
                             mark=not ctx.dry_run)  # fmt: skip
        if index is not None:
            stale = gone_from_journals(ctx.workspace, index.lost, ctx.reporter.warn)
            data["index"], data["index_line"] = with_stale(index, stale)
    if do_archive:
        data["archive"] = archive(ctx)
    data["counts"] = _counts(data)
    ctx.embed_afterwards()
    return CommandResult("tidy", data, tuple(render.tidy(data)))


def _counts(data: TidyData) -> dict[str, int]:
    """What the run did, as numbers the run history keeps (`memfuse status` shows them)."""
    counts: dict[str, int] = {}
    report = data["reflect"]
    for phase, values in report.items() if isinstance(report, dict) else ():
        for key, value in values.items() if isinstance(values, dict) else ():
            if isinstance(value, int) and not isinstance(value, bool):
                counts[f"{phase}.{key}"] = value
    totals = data["reflect_totals"]
    if totals:
        counts["store.total"] = totals["after"]
    items = data["consistency"]["items"]
    counts["conflicts"] = sum(1 for item in items if item["verdict"] == "conflict")
    for key in ("lost", "forgotten", "stale"):
        if "index" in data and key in data["index"]:
            counts[f"index.{key}"] = data["index"][key]
    if "archive" in data:
        counts["archived"] = len(data["archive"]["archived"])
    return counts
