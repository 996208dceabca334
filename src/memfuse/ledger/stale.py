"""Of the memories the store no longer holds, those whose bullet no journal holds any more:
stale, not lost. Re-sending them is impossible (there is no text to send), so calling them
"to be re-sent" would promise what never happens; `memfuse sync --prune` forgets them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import date
from pathlib import Path

from memfuse.ledger.ledger import Entry
from memfuse.ledger.reconcile import Reconciliation
from memfuse.workspace.layout import Journal, Workspace
from memfuse.workspace.weekly import Warn


def gone_from_journals(
    workspace: Workspace,
    entries: Iterable[Entry],
    warn: Warn,
    read: Mapping[date, Journal] | None = None,
) -> set[str]:
    """The positions of `entries` that no journal holds now (`read`: journals read already).
    A day not read whole holds its own; a file that cannot be read makes none stale at all."""
    wanted: dict[date, set[str]] = {}
    for entry in entries:
        try:
            wanted.setdefault(date.fromisoformat(entry.day), set()).add(entry.position)
        except ValueError:
            continue
    failed: list[Path] = []
    unsure: set[date] = set()
    held: set[str] = set()
    unreadable = lambda p, _w: failed.append(p)  # noqa: E731
    for journal in workspace.journals(wanted, warn, unreadable=unreadable, read=read):
        if not journal.complete:
            unsure.add(journal.day)
        held |= {position.key for position, _bullet in journal.positioned()}
    if failed:
        return set()
    return {
        position
        for day, positions in wanted.items()
        if day not in unsure
        for position in positions
        if position not in held
    }


def with_stale(report: Reconciliation, stale: set[str]) -> tuple[dict[str, int], str]:
    """The index's numbers and line, the stale told apart from the lost."""
    lost = tuple(e for e in report.lost if e.position not in stale)
    told = replace(report, lost=lost, stale=len(stale))
    return told.as_dict(), told.line()
