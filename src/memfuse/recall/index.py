"""The local full-text index of the Markdown side, for `memfuse recall`.

SQLite FTS5 in the state folder: one row per journal bullet (in every form the journals take:
daily, archived, a weekly roll-up's section) and per MEMORY.md fact, with its location
(`memory/2026-12-03.md:7`, `memory/archive/…`, `memory/weekly/…`, `MEMORY.md:4`). A bullet is
indexed in four columns (the recipe measured in docs/recall-quality.md):

- `own`: its terms (memfuse.recall.terms: stop words out, Snowball stems, CJK characters and
  pairs);
- `near1`, `near2`: the terms of the bullets one and two away in the same section — a question
  is often answered by the bullet after the one that shares its words;
- `dates`: its journal day's tokens (memfuse.recall.dates), for the dates a question names.

A question is ranked with FTS5's BM25 over the columns weighted 1, 0.5, 0.25 and 1. Refreshing
re-reads only files whose size, time or role changed, drops what is gone, and then merges a
bounded share of FTS5's segments and frees pages, so the file does not grow with how often a
journal is touched. The index is derived: deleting it is safe.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.recall.dates import doc_tokens, query_tokens
from memfuse.recall.terms import doc_terms, query_terms
from memfuse.state.folder import StateFolder
from memfuse.state.sqlite import SIDECARS, Outdated, immediate, open_private_db, quarantine_db
from memfuse.text.classify import Classifier
from memfuse.workspace.journal import Bullet
from memfuse.workspace.layout import Source, Workspace
from memfuse.workspace.memory_md import memory_md_facts

SCHEMA = """
PRAGMA auto_vacuum = INCREMENTAL;
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, days TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, line INTEGER NOT NULL, day TEXT,
    type TEXT NOT NULL, content TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE VIRTUAL TABLE IF NOT EXISTS bullets USING fts5(
    own, near1, near2, dates, tokenize = 'unicode61'
);
"""
# The index of memfuse before the recipe (one column of unstemmed terms): replaced, silently.
FORMER = (
    """
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER);
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, line INTEGER NOT NULL, day TEXT,
    type TEXT NOT NULL, content TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE VIRTUAL TABLE IF NOT EXISTS fulltext USING fts5(words, tokenize = 'unicode61');
""",
)
WEIGHTS = (1.0, 0.5, 0.25, 1.0)  # own, near1, near2, dates: docs/recall-quality.md
MERGE_PAGES = 64  # FTS5 segment pages merged after a refresh that changed something
REBUILT = "the local recall index was not usable: it is rebuilt from the Markdown"

# line, day, type, text, then the terms of the four columns: own, near1, near2, dates
Row = tuple[int, str | None, str, str, str, str, str, str]


@dataclass(frozen=True)
class Hit:
    location: str  # memory/2026-12-03.md:7 or MEMORY.md:4
    content: str
    type: str
    day: str | None
    rank: int  # 1 = best
    score: float  # BM25, higher is better


@dataclass(frozen=True)
class Stages:
    """The parts of the local search that can be switched off (the benchmark measures each)."""

    near: bool = True
    dates: bool = True


class IndexError_(MemfuseError):
    """The local index cannot be used, even after starting it again."""


class RecallIndex:
    def __init__(self, state: StateFolder) -> None:
        self.path = state.recall_index
        # True when an unusable index was moved aside and started again: it holds nothing that
        # the Markdown does not, and the first refresh re-reads every file.
        self.rebuilt = False
        state.ensure()
        try:
            self.db = self._open(state)
        except Outdated:  # memfuse's own, from before: derived, so simply started again
            for suffix in SIDECARS:
                state.remove(f"{state.RECALL_INDEX}{suffix}")
            self.db = self._open(state)
        except (sqlite3.DatabaseError, UnsafePath) as exc:
            quarantine_db(state, state.RECALL_INDEX, str(exc))
            self.rebuilt = True
            try:
                self.db = self._open(state)
            except (sqlite3.DatabaseError, UnsafePath) as again:
                why = f"the recall index {self.path} cannot be used ({again})"
                raise IndexError_(why) from None

    @staticmethod
    def _open(state: StateFolder) -> sqlite3.Connection:
        return open_private_db(state, state.RECALL_INDEX, SCHEMA, former=FORMER)

    def close(self) -> None:
        self.db.close()

    def refresh(
        self, workspace: Workspace, classifier: Classifier, warn: Callable[[str], None]
    ) -> int:
        """Re-index what changed; the number of files re-read."""
        wanted = _files(workspace)
        known = {
            row[0]: (row[1], row[2], row[3])
            for row in self.db.execute("SELECT path, mtime_ns, size, days FROM files")
        }
        changed = 0
        for name, (path, sources) in wanted.items():
            try:
                info = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            days = ",".join(s.day.isoformat() for s in sources)
            if known.get(name) == (info.st_mtime_ns, info.st_size, days):
                continue
            rows = _rows(workspace, path, sources, classifier, warn)
            with immediate(self.db):
                self._drop(name)
                for line, day, kind, content, own, near1, near2, dates in rows or ():
                    cursor = self.db.execute(
                        "INSERT INTO docs (path, line, day, type, content) VALUES (?, ?, ?, ?, ?)",
                        (name, line, day, kind, content),
                    )
                    self.db.execute(
                        "INSERT INTO bullets (rowid, own, near1, near2, dates)"
                        " VALUES (?, ?, ?, ?, ?)",
                        (cursor.lastrowid, own, near1, near2, dates),
                    )
                self.db.execute(
                    "INSERT OR REPLACE INTO files (path, mtime_ns, size, days) VALUES (?, ?, ?, ?)",
                    (name, info.st_mtime_ns, info.st_size, days),
                )
            changed += 1
        for gone in set(known) - set(wanted):
            with immediate(self.db):
                self._drop(gone)
            changed += 1
        if changed:
            self._compact()
        return changed

    def _compact(self) -> None:
        """A bounded share of FTS5's merge work, and the pages freed: what a refresh deleted
        is reclaimed instead of piling up with every touch of a journal."""
        with immediate(self.db):
            self.db.execute(
                "INSERT INTO bullets (bullets, rank) VALUES ('merge', ?)", (MERGE_PAGES,)
            )
        self.db.execute("PRAGMA incremental_vacuum")

    def _drop(self, name: str) -> None:
        self.db.execute(
            "DELETE FROM bullets WHERE rowid IN (SELECT id FROM docs WHERE path = ?)", (name,)
        )
        self.db.execute("DELETE FROM docs WHERE path = ?", (name,))
        self.db.execute("DELETE FROM files WHERE path = ?", (name,))

    def search(
        self, query: str, limit: int, today: date, stages: Stages | None = None
    ) -> list[Hit]:
        """The best `limit` bullets and facts for a question, best first."""
        stages = stages or Stages()
        wanted = query_terms(query) + (query_tokens(query, today) if stages.dates else [])
        wanted = list(dict.fromkeys(wanted))
        if not wanted:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in wanted)
        weights = WEIGHTS if stages.near else (WEIGHTS[0], 0.0, 0.0, WEIGHTS[3])
        # BM25 once a match, and only the best `limit` joined to their text (measured in
        # benchmarks/bench.py: a common word matches most of a year's bullets).
        rows = self.db.execute(
            "SELECT d.path, d.line, d.content, d.type, d.day, -best.score FROM ("
            " SELECT rowid AS id, bm25(bullets, ?, ?, ?, ?) AS score FROM bullets"
            " WHERE bullets MATCH ? ORDER BY score, rowid LIMIT ?"
            ") best JOIN docs d ON d.id = best.id ORDER BY best.score, best.id",
            (*weights, match, limit),
        ).fetchall()
        return [
            Hit(f"{path}:{line}", content, kind, day, rank, float(score))
            for rank, (path, line, content, kind, day, score) in enumerate(rows, start=1)
        ]


def _files(workspace: Workspace) -> dict[str, tuple[os.PathLike[str], tuple[Source, ...]]]:
    """What the index holds, by the location of each file: the journal files with the days
    each is the truth for (memfuse.workspace.layout.Workspace.sources), and MEMORY.md."""
    by_file: dict[str, list[Source]] = {}
    for source in workspace.sources().values():
        by_file.setdefault(workspace.location(source.path), []).append(source)
    found: dict[str, tuple[os.PathLike[str], tuple[Source, ...]]] = {
        name: (sources[0].path, tuple(sources)) for name, sources in by_file.items()
    }
    found[workspace.location(workspace.memory_md)] = (workspace.memory_md, ())
    return found


def _rows(
    workspace: Workspace,
    path: os.PathLike[str],
    sources: tuple[Source, ...],
    classifier: Classifier,
    warn: Callable[[str], None],
) -> list[Row] | None:
    """What to index of one file; None when it cannot be read."""
    if not sources:  # MEMORY.md: facts, timeless, with no neighbours
        raw = workspace.read_memory_md(warn)
        if raw is None:
            return [] if not os.path.exists(path) else None
        text = raw.decode("utf-8", errors="replace")
        return [
            (n, None, "knowledge", fact, " ".join(doc_terms(fact)), "", "", "")
            for n, fact in memory_md_facts(text)
        ]
    rows: list[Row] = []
    for source in sources:
        with contextlib.suppress(FileNotFoundError):  # a week without this day's section
            parsed = workspace.read_source(source, warn)
            if parsed is None:
                return None
            dates = " ".join(doc_tokens(source.day))
            for bullet, own, near1, near2 in _with_neighbours(parsed.bullets):
                kind = classifier.classify(bullet.text).type
                rows.append((bullet.line, source.day.isoformat(), kind, bullet.text, own, near1,
                             near2, dates))  # fmt: skip
    return rows


def _with_neighbours(bullets: tuple[Bullet, ...]) -> Iterator[tuple[Bullet, str, str, str]]:
    """Each bullet with the terms of the bullets one and two away in its section (never
    across a section: a section is one sitting of the journal)."""
    sections: dict[str, list[Bullet]] = {}
    for bullet in bullets:
        sections.setdefault(bullet.key, []).append(bullet)
    terms = {id(b): " ".join(doc_terms(b.text)) for b in bullets}
    for members in sections.values():
        for n, bullet in enumerate(members):

            def around(step: int, n: int = n, members: list[Bullet] = members) -> str:
                near = [members[i] for i in (n - step, n + step) if 0 <= i < len(members)]
                return " ".join(terms[id(b)] for b in near)

            yield bullet, terms[id(bullet)], around(1), around(2)


def refresh_index(
    workspace: Workspace, classifier: Classifier, warn: Callable[[str], None]
) -> int | None:
    """Bring the index up to date (sync does, so recall starts warm): the number of files
    re-read, or None, with one warning, when the index cannot be used. Best-effort: the index
    is derived, and recall rebuilds what is missing on demand."""
    try:
        index = RecallIndex(workspace.state)
    except (MemfuseError, OSError) as exc:
        warn(f"the local recall index cannot be used: {exc}")
        return None
    if index.rebuilt:
        warn(REBUILT)
    try:
        return index.refresh(workspace, classifier, warn)
    except (sqlite3.Error, OSError) as exc:
        warn(f"the local recall index was not refreshed: {exc}")
        return None
    finally:
        index.close()
