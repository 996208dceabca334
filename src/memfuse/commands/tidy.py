"""`memfuse tidy`: the 03:00 run — the store's sleep cycle, a MEMORY.md consistency check,
the MEMORY.md backup and size guard, and (with --archive) the weekly journal roll-up."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from memfuse.ledger.ledger import LEDGER_NAME, Ledger, content_hash, position_key
from memfuse.ledger.reconcile import verify_index
from memfuse.recall.reranking import recall_arguments, rerank_answer, reranking
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import (
    ArchiveData,
    ArchivedRow,
    ConsistencyData,
    MemoryMdData,
    RefusedRow,
    TidyData,
)
from memfuse.store.generations import reflect_counts, reflect_totals
from memfuse.text.consistency import check
from memfuse.workspace.confine import UnsafePath
from memfuse.workspace.journal import parse_bytes
from memfuse.workspace.journals import list_journals
from memfuse.workspace.rollup import archive_dir, roll_up, weekly_path

CONSISTENCY_QUERY = "当前最重要的事"
CONSISTENCY_LIMIT = 3


def read_memory_md(ctx: RunContext) -> bytes | None:
    """MEMORY.md's bytes, read once for the whole run; None when there is none."""
    try:
        return ctx.files.read(ctx.settings.workspace / "MEMORY.md")
    except FileNotFoundError:
        return None
    except UnsafePath as exc:
        ctx.reporter.warn(f"{exc}; MEMORY.md is skipped")
        return None
    except OSError as exc:
        ctx.reporter.warn(f"cannot read MEMORY.md: {exc.strerror or exc}; skipped")
        return None


def consistency(ctx: RunContext, reflect_ok: bool, memory_md: bytes | None) -> ConsistencyData:
    s = ctx.settings
    reason = None
    if ctx.dry_run:
        reason = "dry run"
    elif not reflect_ok:
        reason = "reflect failed"
    elif memory_md is None:
        reason = "no MEMORY.md"
    rerank = reranking(ctx, s.rerank.tidy)
    answer = None
    if reason is None:
        arguments = recall_arguments(CONSISTENCY_QUERY, CONSISTENCY_LIMIT, rerank=rerank)
        answer = rerank_answer(ctx, CONSISTENCY_QUERY, ctx.guard.call("recall", arguments),
                               CONSISTENCY_LIMIT, rerank=rerank)  # fmt: skip
    memories = (answer or {}).get("memories")
    if reason is None and not isinstance(memories, list):
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
    assert isinstance(memories, list)
    assert memory_md is not None
    text = memory_md.decode("utf-8", errors="replace")
    findings = check(
        [m for m in memories if isinstance(m, dict)], text,
        s.consistent_similarity, s.related_similarity,
    )  # fmt: skip
    conflicts = sum(f.verdict == "conflict" for f in findings)
    linked = sum(f.verdict == "related" for f in findings)
    summary = (
        f"consistency check: ⚠️ CONFLICT ({conflicts})" if conflicts else "consistency check: OK"
    ) + (f", {linked} related" if linked else "")
    return {
        "status": "conflict" if conflicts else "ok",
        "summary": summary,
        "items": [f.as_dict() for f in findings],
    }


def reflect(ctx: RunContext) -> tuple[bool, dict[str, Any] | str | None]:
    """(succeeded, counts or raw prose or None). Servers ≥ 3.x answer reflect in prose."""
    if ctx.dry_run:
        return False, None
    answer = ctx.guard.answer("reflect", {"phase": "all"})
    if answer is None:
        return False, None
    if isinstance(answer.value, dict):
        return True, answer.value
    text = answer.text.strip()
    counts = reflect_counts(text)  # 4.x/5.x: a JSON object under each phase heading
    if counts is not None:
        return True, counts
    ctx.reporter.info(f"reflect answered in prose: {text[:500]}")
    return True, text


def guard_memory_md(ctx: RunContext, raw: bytes | None) -> MemoryMdData:
    s = ctx.settings
    if raw is None:
        return {"exists": False, "lines": 0, "backup": None, "over_limit": False}
    lines = len(raw.decode("utf-8", errors="replace").splitlines())
    backup = archive_dir(s.workspace) / f"MEMORY.md.bak-{s.now.date().isoformat()}"
    made = False
    if not backup.exists() and not ctx.dry_run:
        try:
            ctx.files.write(backup, raw, create_parents=True)
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
        "backup": str(backup) if backup.exists() else None,
        "backup_made": made,
        "over_limit": over,
    }


def unsynced(ledger: Ledger | None, day: date, raw: bytes) -> int:
    """Bullets of a daily (its bytes `raw`) whose current text the ledger has not settled."""
    bullets = parse_bytes(raw).bullets
    known = ledger.entries_for([day.isoformat()]) if ledger is not None else {}
    missing = 0
    for bullet in bullets:
        entry = known.get(position_key(day.isoformat(), bullet.position))
        if entry is None or not entry.settles(content_hash(bullet.text)):
            missing += 1
    return missing


def archive(ctx: RunContext) -> ArchiveData:
    s = ctx.settings
    # Keep the last `archive_after_days` calendar days (today included), the window surface
    # shows; anything older is rolled up.
    cutoff = s.now.date() - timedelta(days=s.archive_after_days - 1)
    old = {d: p for d, p in list_journals(s.workspace).items() if d < cutoff}
    has_ledger = (s.state_dir / LEDGER_NAME).exists()
    ledger = Ledger(s.state_dir) if has_ledger else None
    done: list[ArchivedRow] = []
    refused: list[RefusedRow] = []
    try:
        for day, path in sorted(old.items()):
            try:
                raw = ctx.files.read(path)
            except (UnsafePath, OSError) as exc:
                ctx.reporter.warn(f"not archiving {path.name}: {exc}")
                continue
            missing = unsynced(ledger, day, raw)
            if missing:
                refused.append({"date": day.isoformat(), "unsynced": missing})
                ctx.reporter.warn(
                    f"not archiving {path.name}: {missing} bullet(s) not synced yet"
                    f" (run memfuse sync --date {day.isoformat()})"
                )
                continue
            if ctx.dry_run:
                done.append(
                    {
                        "date": day.isoformat(),
                        "weekly": str(weekly_path(s.workspace, day)),
                        "appended": None,
                    }
                )
                continue
            try:
                rolled = roll_up(ctx.files, day, path, raw)
            except UnsafePath as exc:
                ctx.reporter.warn(f"not archiving {path.name}: {exc}")
                continue
            done.append(
                {
                    "date": day.isoformat(),
                    "weekly": str(rolled.weekly),
                    "archived_to": str(rolled.archived_to),
                    "appended": rolled.appended,
                }
            )
    finally:
        if ledger is not None:
            ledger.close()
    return {"archived": done, "refused": refused}


def run(ctx: RunContext, *, do_archive: bool = False) -> CommandResult:
    reflected, report = reflect(ctx)
    text = read_memory_md(ctx)
    checked = consistency(ctx, reflected, text)
    memory_md = guard_memory_md(ctx, text)
    data: TidyData = {
        "dry_run": ctx.dry_run,
        "reflect": report,
        "reflect_totals": reflect_totals(report) if isinstance(report, str) else None,
        "consistency": checked,
        "memory_md": memory_md,
        "status": ctx.guard.call("status", {}) if ctx.dry_run else None,
    }
    # Right after the store forgot: record what it forgot, mark what it lost for the next sync.
    if (ctx.settings.state_dir / LEDGER_NAME).exists():
        ledger = Ledger(ctx.settings.state_dir)
        try:
            checked_index = verify_index(ctx, ledger)
        finally:
            ledger.close()
        if checked_index is not None:
            data["index"] = checked_index.as_dict()
            data["index_line"] = checked_index.line()
    if do_archive:
        data["archive"] = archive(ctx)
    return CommandResult("tidy", data, tuple(render.tidy(data)))
