"""`memfuse rollback`: the design's way back — forget, in the store, every memory memfuse made,
and stop syncing until the operator says so.

Only memfuse's own memories are forgotten: those the ledger says memfuse created, and those the
store holds at a journal URI with memfuse's `memory-sync:` source (a ledger lost since would
otherwise leave them behind). Each is looked up at its URI first and forgotten only when the
memory there is that one and carries that source: a memory memfuse merged into, or one someone
else put at the URI, stays. Then every ledger position is marked `withdrawn` and sync pauses:
a later sync sends nothing until `memfuse rollback --undo`, which marks them to be sent again
by the next sync. `--dry-run` lists what would be forgotten and changes nothing.
"""

from __future__ import annotations

from memfuse.ledger.ledger import PAUSED, Entry, Ledger, paused_since, set_paused
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import RollbackData, RollbackRow
from memfuse.store.answers import StoredMemory
from memfuse.workspace.position import JOURNAL_PREFIXES, SOURCE_PREFIX


def run(ctx: RunContext, *, undo: bool = False) -> CommandResult:
    ledger = Ledger(ctx.workspace.state)
    try:
        data = _undo(ctx, ledger) if undo else _rollback(ctx, ledger)
    finally:
        ledger.close()
    return CommandResult("rollback", data, tuple(render.rollback(data)))


def _rollback(ctx: RunContext, ledger: Ledger) -> RollbackData:
    entries = ledger.all_entries()
    by_uri = {e.uri: e for e in entries if e.uri}
    candidates: dict[str, str | None] = {
        e.uri: e.memory_id for e in entries if e.created and e.uri and e.memory_id
    }
    listed = ctx.store.uris_under(JOURNAL_PREFIXES)
    if listed is None:
        ctx.reporter.warn("the store's journal memories could not be listed: only the ledger's")
    for uri in (listed or set()) - set(by_uri):
        candidates.setdefault(uri, None)  # not in the ledger: its source decides below
    rows: list[RollbackRow] = []
    for uri, memory_id in sorted(candidates.items()):
        found = ctx.store.lookup(uri)
        verdict = _verdict(found, memory_id)
        if verdict == "forget" and not ctx.dry_run:
            assert found is not None
            assert found.id is not None
            verdict = "forgotten" if ctx.store.forget(found.id) else "failed"
        rows.append({"uri": uri, "memory_id": found.id if found else memory_id,
                     "outcome": verdict})  # fmt: skip
    data: RollbackData = {
        "dry_run": ctx.dry_run,
        "undo": False,
        "candidates": rows,
        "counts": _count(rows),
        "withdrawn": 0,
        "paused_since": ledger.setting(PAUSED) or paused_since(ctx.workspace.state),
    }
    failed = data["counts"].get("failed", 0)
    if not ctx.dry_run and not failed:
        positions = [e.position for e in entries if e.outcome != "withdrawn"]
        ledger.mark(positions, "withdrawn")
        since = ctx.settings.now.isoformat(timespec="seconds")
        ledger.set_setting(PAUSED, data["paused_since"] or since)
        set_paused(ctx.workspace.state, data["paused_since"] or since)
        data["withdrawn"], data["paused_since"] = len(positions), data["paused_since"] or since
    elif failed:
        ctx.reporter.warn(
            f"{failed} memories could not be forgotten: nothing is marked and sync goes on;"
            " run `memfuse rollback` again"
        )
    return data


def _verdict(found: StoredMemory | None, memory_id: str | None) -> str:
    """What to do with the memory at a URI memfuse synced to."""
    if found is None:
        return "gone"
    if found.id is None or (memory_id is not None and found.id != memory_id):
        return "not memfuse's"
    if not (found.source or "").startswith(SOURCE_PREFIX):
        return "not memfuse's"
    return "forget"


def _count(rows: list[RollbackRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    return counts


def _undo(ctx: RunContext, ledger: Ledger) -> RollbackData:
    withdrawn: list[Entry] = [e for e in ledger.all_entries() if e.outcome == "withdrawn"]
    if not ctx.dry_run:
        ledger.mark((e.position for e in withdrawn), "resumed")
        ledger.set_setting(PAUSED, None)
        set_paused(ctx.workspace.state, None)
    return {
        "dry_run": ctx.dry_run,
        "undo": True,
        "candidates": [],
        "counts": {},
        "withdrawn": len(withdrawn),
        "paused_since": None
        if not ctx.dry_run
        else ledger.setting(PAUSED) or paused_since(ctx.workspace.state),
    }
