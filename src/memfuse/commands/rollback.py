"""`memfuse rollback`: forget, in the store, every memory memfuse made (and only those), then
pause sync until `--undo`: read, plan (pure), act (docs/architecture.md)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memfuse.errors import ConfigError
from memfuse.ledger.ledger import Entry, Ledger
from memfuse.ledger.reader import LedgerReader
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import RollbackData, RollbackRow
from memfuse.state.folder import StateFolder, default_state_dir, paused_since, set_paused
from memfuse.store.answers import StoredMemory
from memfuse.workspace.position import JOURNAL_PREFIXES, SOURCE_PREFIX


def run(ctx: RunContext, *, undo: bool = False, shared_with: Sequence[Path] = ()) -> CommandResult:
    """`shared_with`: the other workspaces whose memories are in this store too (a database
    agents shared): only this ledger's own memories are forgotten, none another one holds."""
    ctx.sharing = tuple(os.path.realpath(os.path.expanduser(str(w))) for w in shared_with)
    others = _others(ctx, ctx.sharing) if shared_with else None
    data = _undo(ctx, ctx.ledger) if undo else _rollback(ctx, ctx.ledger, others)
    return CommandResult("rollback", data, tuple(render.rollback(data)))


# the verdicts that leave a memory where it is
KEPT = ("gone", "not memfuse's", "another workspace's")


@dataclass(frozen=True)
class Step:
    """One memory at a journal URI and the plan's verdict: `forget`, or a reason to keep it."""

    uri: str
    memory_id: str | None  # the id the store answered, else the one the ledger recorded
    verdict: str


@dataclass(frozen=True)
class RollbackPlan:
    """What a rollback will do, decided before any call that changes the store."""

    steps: tuple[Step, ...]  # by URI
    withdraw: tuple[str, ...]  # the ledger positions marked withdrawn once all is forgotten

    @property
    def forget(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.verdict == "forget")

    def as_dict(self) -> dict[str, list[str]]:
        return {
            "forget": [s.uri for s in self.forget],
            "keep": [s.uri for s in self.steps if s.verdict in KEPT],
            "withdraw": list(self.withdraw),
        }


def candidates(entries: Sequence[Entry], listed: Collection[str] | None) -> dict[str, str | None]:
    """Every URI to look up, with the memory id memfuse expects there (pure): those the ledger
    says memfuse created, and the journal URIs the store lists that the ledger does not know
    (None: only their source can tell whether they are memfuse's)."""
    known = {e.uri for e in entries if e.uri}
    found: dict[str, str | None] = {
        e.uri: e.memory_id for e in entries if e.created and e.uri and e.memory_id
    }
    for uri in sorted(set(listed or ()) - known):
        found.setdefault(uri, None)
    return dict(sorted(found.items()))


def plan(
    entries: Sequence[Entry],
    expected: Mapping[str, str | None],
    found: Mapping[str, StoredMemory | None],
) -> RollbackPlan:
    """What to do about what was read (pure). `expected`: `candidates`' answer; `found`: the
    store's lookup of each of those URIs (None: nothing is there)."""
    steps = []
    for uri, memory_id in expected.items():
        memory = found.get(uri)
        steps.append(Step(uri, memory.id if memory else memory_id, verdict(memory, memory_id)))
    withdraw = tuple(e.position for e in entries if e.outcome != "withdrawn")
    return RollbackPlan(tuple(steps), withdraw)


def _read_and_plan(ctx: RunContext, ledger: Ledger, others: set[str] | None) -> RollbackPlan:
    """Read the ledger's entries, the store's journal URIs and each lookup; plan from them.
    `others`: the memory ids other workspaces' ledgers hold in this shared store — then the
    store's listed URIs are not candidates, and a memory another ledger holds stays."""
    entries = ledger.all_entries()
    listed: Collection[str] | None = ()
    if others is None:
        listed = ctx.store.uris_under(JOURNAL_PREFIXES)
        if listed is None:
            ctx.reporter.warn("the store's journal memories could not be listed: only the ledger's")
    expected = candidates(entries, listed)
    found = {uri: ctx.store.lookup(uri) for uri in expected}
    the_plan = plan(entries, expected, found)
    if not others:
        return the_plan
    steps = tuple(
        Step(s.uri, s.memory_id, "another workspace's")
        if s.verdict == "forget" and s.memory_id in others
        else s
        for s in the_plan.steps
    )
    return RollbackPlan(steps, the_plan.withdraw)


def _others(ctx: RunContext, workspaces: Sequence[str]) -> set[str]:
    """Every memory id these workspaces' ledgers (real paths; each must have one) record."""
    held: set[str] = set()
    mine = os.path.realpath(ctx.workspace.root)
    for real in workspaces:
        if real == mine:
            raise ConfigError("--shared-with names the other workspaces, not this one")
        reader = LedgerReader.open(StateFolder(default_state_dir(Path(real), os.environ)))
        if reader is None:
            raise ConfigError(
                f"--shared-with {real}: it has no sync ledger here, so nothing can tell its"
                " memories apart; name only workspaces memfuse synced"
            )
        try:
            rows = reader.rows("SELECT memory_id FROM entries WHERE memory_id IS NOT NULL")
        finally:
            reader.close()  # one other ledger open at a time, as ledger.reader's own reads
        held |= {str(memory_id) for (memory_id,) in rows}
    return held


def _rollback(ctx: RunContext, ledger: Ledger, others: set[str] | None) -> RollbackData:
    the_plan = _read_and_plan(ctx, ledger, others)
    rows = [
        _row(step, step.verdict if ctx.dry_run else _apply(ctx, step)) for step in the_plan.steps
    ]
    data: RollbackData = {
        "dry_run": ctx.dry_run,
        "undo": False,
        "candidates": rows,
        "counts": dict(Counter(row["outcome"] for row in rows)),
        "withdrawn": 0,
        "paused_since": paused_since(ctx.workspace.state),
        "plan": the_plan.as_dict(),
    }
    failed = data["counts"].get("failed", 0)
    if not ctx.dry_run and not failed:
        ledger.mark(the_plan.withdraw, "withdrawn")
        since = data["paused_since"] or ctx.settings.now.isoformat(timespec="seconds")
        set_paused(ctx.workspace.state, since)
        data["withdrawn"], data["paused_since"] = len(the_plan.withdraw), since
    elif failed:
        ctx.reporter.warn(
            f"{failed} memories could not be forgotten: nothing is marked and sync goes on;"
            " run `memfuse rollback` again"
        )
    return data


def _apply(ctx: RunContext, step: Step) -> str:
    """Carry out one step of the plan: forget a memory memfuse made; its outcome."""
    if step.verdict != "forget":
        return step.verdict
    assert step.memory_id is not None
    return "forgotten" if ctx.store.forget(step.memory_id) else "failed"


def _row(step: Step, outcome: str) -> RollbackRow:
    return {"uri": step.uri, "memory_id": step.memory_id, "outcome": outcome}


def verdict(found: StoredMemory | None, memory_id: str | None) -> str:
    """What to do with the memory at a URI memfuse synced to."""
    if found is None:
        return "gone"
    if found.id is None or (memory_id is not None and found.id != memory_id):
        return "not memfuse's"
    if not (found.source or "").startswith(SOURCE_PREFIX):
        return "not memfuse's"
    return "forget"


def _undo(ctx: RunContext, ledger: Ledger) -> RollbackData:
    withdrawn: list[Entry] = [e for e in ledger.all_entries() if e.outcome == "withdrawn"]
    if not ctx.dry_run:
        ledger.mark((e.position for e in withdrawn), "resumed")
        set_paused(ctx.workspace.state, None)
    return {
        "dry_run": ctx.dry_run,
        "undo": True,
        "candidates": [],
        "counts": {},
        "withdrawn": len(withdrawn),
        "paused_since": paused_since(ctx.workspace.state) if ctx.dry_run else None,
    }
