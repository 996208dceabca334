"""The local full-text index of the Markdown side, for `memfuse recall`.

SQLite FTS5 in `.memfuse/recall.sqlite3`: one row per journal bullet and per MEMORY.md fact,
with its location (`memory/YYYY-MM-DD.md:LINE`, `MEMORY.md:LINE`). Text is indexed as Latin
words plus CJK characters and CJK bigrams, so Chinese matches without a segmenter. Refreshing
re-reads only files whose size or mtime changed (through the confined reader: the workspace
is attacker input), and drops files that are gone. The index is derived: deleting it is safe.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.state.folder import StateFolder
from memfuse.state.sqlite import immediate, open_private_db, quarantine_db
from memfuse.text.classify import Classifier
from memfuse.text.similarity import search_terms
from memfuse.workspace.layout import Workspace, journal_date
from memfuse.workspace.memory_md import memory_md_facts

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER);
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, line INTEGER NOT NULL, day TEXT,
    type TEXT NOT NULL, content TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE VIRTUAL TABLE IF NOT EXISTS fulltext USING fts5(words, tokenize = 'unicode61');
"""


terms = search_terms
REBUILT = "the local recall index was not usable: it is rebuilt from the Markdown"


@dataclass(frozen=True)
class Hit:
    location: str  # memory/2026-12-03.md:7 or MEMORY.md:4
    content: str
    type: str
    day: str | None
    rank: int  # 1 = best


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
            self.db = open_private_db(state, state.RECALL_INDEX, SCHEMA)
        except (sqlite3.DatabaseError, UnsafePath) as exc:
            quarantine_db(state, state.RECALL_INDEX, str(exc))
            self.rebuilt = True
            try:
                self.db = open_private_db(state, state.RECALL_INDEX, SCHEMA)
            except (sqlite3.DatabaseError, UnsafePath) as again:
                why = f"the recall index {self.path} cannot be used ({again})"
                raise IndexError_(why) from None

    def close(self) -> None:
        self.db.close()

    def refresh(
        self, workspace: Workspace, classifier: Classifier, warn: Callable[[str], None]
    ) -> int:
        """Re-index what changed; the number of files re-read."""
        sources = {workspace.location(p): p for p in workspace.daily_journals().values()}
        sources[workspace.location(workspace.memory_md)] = workspace.memory_md
        known = {
            row[0]: (row[1], row[2])
            for row in self.db.execute("SELECT path, mtime_ns, size FROM files")
        }
        changed = 0
        for name, path in sources.items():
            try:
                info = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            if known.get(name) == (info.st_mtime_ns, info.st_size):
                continue
            rows = self._rows(path, workspace, classifier, warn)
            with immediate(self.db):
                self._drop(name)
                for line, day, kind, content in rows or ():
                    cursor = self.db.execute(
                        "INSERT INTO docs (path, line, day, type, content) VALUES (?, ?, ?, ?, ?)",
                        (name, line, day, kind, content),
                    )
                    self.db.execute(
                        "INSERT INTO fulltext (rowid, words) VALUES (?, ?)",
                        (cursor.lastrowid, " ".join(terms(content))),
                    )
                self.db.execute(
                    "INSERT OR REPLACE INTO files (path, mtime_ns, size) VALUES (?, ?, ?)",
                    (name, info.st_mtime_ns, info.st_size),
                )
            changed += 1
        for gone in set(known) - set(sources):
            with immediate(self.db):
                self._drop(gone)
        return changed

    def _drop(self, name: str) -> None:
        self.db.execute(
            "DELETE FROM fulltext WHERE rowid IN (SELECT id FROM docs WHERE path = ?)", (name,)
        )
        self.db.execute("DELETE FROM docs WHERE path = ?", (name,))
        self.db.execute("DELETE FROM files WHERE path = ?", (name,))

    @staticmethod
    def _rows(
        path: Path, workspace: Workspace, classifier: Classifier, warn: Callable[[str], None]
    ) -> list[tuple[int, str | None, str, str]] | None:
        """What to index of one file: (line, day, type, text) rows; None when unreadable."""
        if path == workspace.memory_md:
            raw = workspace.read_memory_md(warn)
            if raw is None:
                return [] if not path.exists() else None
            text = raw.decode("utf-8", errors="replace")
            return [(n, None, "knowledge", fact) for n, fact in memory_md_facts(text)]
        day = journal_date(path)
        try:
            parsed = workspace.read_journal(path, warn)
        except FileNotFoundError:
            return []
        if parsed is None or day is None:
            return None
        iso = day.isoformat()
        return [(b.line, iso, classifier.classify(b.text).type, b.text) for b in parsed.bullets]

    def search(self, query: str, limit: int) -> list[Hit]:
        wanted = list(dict.fromkeys(terms(query)))
        if not wanted:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in wanted)
        rows = self.db.execute(
            "SELECT d.path, d.line, d.content, d.type, d.day FROM fulltext JOIN docs d"
            " ON d.id = fulltext.rowid WHERE fulltext MATCH ? ORDER BY bm25(fulltext) LIMIT ?",
            (match, limit),
        ).fetchall()
        return [
            Hit(f"{path}:{line}", content, kind, day, rank)
            for rank, (path, line, content, kind, day) in enumerate(rows, start=1)
        ]


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
