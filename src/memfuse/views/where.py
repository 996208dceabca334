"""The flow of `memfuse where` (and serve's `where` tool): one bullet's whole story — where
it is, the memory it became, every answer the store gave it, and whether the store holds it
now. It reads the ledger read-only and asks the store one `recall_path` per bullet found.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

from memfuse.confine import UnsafePath
from memfuse.ledger.ledger import Attempt, Entry, LedgerError
from memfuse.ledger.reader import LedgerReader
from memfuse.run import render
from memfuse.run.context import Asking
from memfuse.run.output import CommandResult
from memfuse.run.results import BulletRow, WhereData
from memfuse.text.similarity import fold_whitespace
from memfuse.workspace.bullets import Bullet
from memfuse.workspace.position import JournalPosition

FOUND_AT_MOST = 10  # bullets shown for a text that matches many; the rest are counted
_LINE = re.compile(r"(.+\.md)(?:#[0-9-]+)?:([0-9]+)")


@dataclass(frozen=True)
class Found:
    position: JournalPosition
    bullet: Bullet
    location: str


def run(ctx: Asking, what: str) -> CommandResult:
    found = _find(ctx, what.strip())
    keys = [f.position.key for f in found[:FOUND_AT_MOST]]
    entries: dict[str, Entry] = {}
    attempts: dict[str, list[Attempt]] = {}
    try:  # the ledger opened once for both reads (a serve call pays each open)
        reader = LedgerReader.open(ctx.workspace.state)
        if reader is not None:
            with contextlib.closing(reader):
                entries, attempts = reader.entries_of(keys), reader.attempts_of(keys)
    except (LedgerError, UnsafePath) as exc:
        ctx.reporter.warn(f"{exc}; what memfuse sent is not known")
        entries, attempts = {}, {}
    rows: list[BulletRow] = []
    for f in found[:FOUND_AT_MOST]:
        key = f.position.key
        entry = entries.get(key)
        verdict = ctx.classifier.classify(f.bullet.text)
        uri = entry.uri if entry is not None and entry.uri else f.position.uri(verdict.type)
        row: BulletRow = {
            "location": f.location,
            "position": key,
            "text": f.bullet.text,
            "uri": uri,
            "type": entry.memory_type if entry and entry.memory_type else verdict.type,
            "outcome": entry.outcome if entry is not None else None,
            "memory_id": entry.memory_id if entry is not None else None,
            "created_by_memfuse": bool(entry and entry.created),
            "attempts": [
                {"at": a.at, "outcome": a.outcome, "reason": a.reason}
                for a in attempts.get(key, [])
            ],
            "in_store": None,
        }
        failures = ctx.reporter.guard_failures
        stored = ctx.store.lookup(uri)
        if stored is not None or ctx.reporter.guard_failures == failures:  # an answer
            text = fold_whitespace(f.bullet.text)
            row["in_store"] = stored is not None and fold_whitespace(stored.content) == text
        if stored is not None and not row["in_store"]:
            row["store_text"] = stored.content  # a merged or edited memory sits at the URI
        rows.append(row)
    data: WhereData = {"query": what, "matches": len(found), "bullets": rows}
    return CommandResult("where", data, tuple(render.where(data)))


def _find(ctx: Asking, what: str) -> list[Found]:
    """The bullets `what` names: by position (a URI or ledger key), by journal line, or else
    by text (case and whitespace folded), in every form the journals take."""
    workspace = ctx.workspace
    position = JournalPosition.parse(what)
    line = _LINE.fullmatch(what)
    days = [position.day] if position is not None else list(workspace.sources())
    needle = fold_whitespace(what).casefold()
    found: list[Found] = []
    for journal in workspace.journals(days, ctx.reporter.warn):
        for at, bullet, path in journal.located():
            location = workspace.location(path)
            where = f"{location}:{bullet.line}"
            if position is not None:
                hit = at == position
            elif line is not None:
                last = bullet.line + bullet.text.count("\n")
                hit = line[1] == location and bullet.line <= int(line[2]) <= last
            else:
                hit = needle in fold_whitespace(bullet.text).casefold()
            if hit:
                found.append(Found(at, bullet, where))
    return found
