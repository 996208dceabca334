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

A question is ranked with FTS5's BM25 over the columns weighted 1, 0.5, 0.25 and 1, on its
rarest terms only (memfuse.recall.terms.bounded: the index keeps how many rows hold each term,
so a question's cost is bounded whatever its length). Refreshing is one transaction: it
re-reads only files whose size, times, inode or role changed, drops what is gone, and then
merges a bounded share of FTS5's segments and frees pages, so the file does not grow with how
often a journal is touched. A failure part-way leaves the index as it was. The index is
derived: deleting it is safe.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.recall.dates import doc_tokens, query_tokens
from memfuse.recall.terms import bounded, doc_terms, query_terms
from memfuse.state.folder import StateFolder
from memfuse.state.sqlite import SIDECARS, Outdated, immediate, open_private_db, quarantine_db
from memfuse.text.classify import Classifier
from memfuse.workspace.journal import Bullet, decode
from memfuse.workspace.layout import Journal, Source, Workspace
from memfuse.workspace.memory_md import memory_md_facts
from memfuse.workspace.weekly import Weeklies

_DOCS = """
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, line INTEGER NOT NULL, day TEXT,
    type TEXT NOT NULL, content TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
"""
_BULLETS = """
CREATE VIRTUAL TABLE IF NOT EXISTS bullets USING fts5(
    own, near1, near2, dates, tokenize = 'unicode61'
);
"""
SCHEMA = f"""
PRAGMA auto_vacuum = INCREMENTAL;
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER, ctime_ns INTEGER, ino INTEGER, size INTEGER,
    days TEXT NOT NULL DEFAULT '', rows INTEGER NOT NULL DEFAULT 0
);
{_DOCS}{_BULLETS}
CREATE TABLE IF NOT EXISTS terms (term TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID;
"""
# The indexes of former memfuses, replaced silently: the one before the recipe (one column of
# unstemmed terms), and the recipe's first, which knew a file by its size and mtime alone and
# did not count its terms' rows.
FORMER = (
    f"""
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER);
{_DOCS}
CREATE VIRTUAL TABLE IF NOT EXISTS fulltext USING fts5(words, tokenize = 'unicode61');
""",
    f"""
PRAGMA auto_vacuum = INCREMENTAL;
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, days TEXT NOT NULL DEFAULT ''
);
{_DOCS}{_BULLETS}""",
)
WEIGHTS = (1.0, 0.5, 0.25, 1.0)  # own, near1, near2, dates: docs/recall-quality.md
MERGE_PAGES = 64  # FTS5 segment pages merged after a refresh that changed something
REBUILT = "the local recall index was not usable: it is rebuilt from the Markdown"

# line, day, type, text, then the terms of the four columns: own, near1, near2, dates
Row = tuple[int, str | None, str, str, str, str, str, str]
# What a file is known by: mtime, ctime (an editor, `rsync -t` or `git checkout` can put an old
# mtime back on a same-size edit; the ctime it cannot), inode (a file saved by renaming a new
# one over it), size, and the days it is the truth for.
Stamp = tuple[int, int, int, int, str]


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
        self._next_id = 1  # the next row's id, while a refresh writes
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
        """Re-index what changed, in one transaction; the number of files re-read or dropped."""
        wanted = _files(workspace)
        changed = 0
        with immediate(self.db):
            known: dict[str, tuple[Stamp, int]] = {
                row[0]: ((row[1], row[2], row[3], row[4], row[5]), row[6])
                for row in self.db.execute(
                    "SELECT path, mtime_ns, ctime_ns, ino, size, days, rows FROM files"
                )
            }
            (last,) = self.db.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()
            self._next_id = int(last) + 1
            stamps: dict[str, Stamp] = {}
            empty: dict[str, bool] = {}
            present: set[str] = set()
            for name, (path, days) in wanted.items():
                try:
                    info = os.stat(path)  # a link: the file it names, as sync reads it
                except FileNotFoundError:
                    continue  # gone since it was listed (MEMORY.md deleted): dropped below
                except OSError:
                    present.add(name)  # cannot be looked at now: kept as it was
                    continue
                present.add(name)
                role = ",".join(day.isoformat() for day, _forms in days)
                stamps[name] = (info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_size,
                                role)  # fmt: skip
                empty[name] = _empty(info)
            days_read = DaysRead(workspace, classifier, warn)
            for name in _to_read_again(stamps, known, present):
                path, days = wanted[name]
                before = known.get(name)
                if empty[name]:  # a touched empty journal: nothing to read
                    rows: list[Row] | None = []
                else:
                    rows = _rows(workspace, path, days, days_read, warn)
                self._put(name, stamps[name], rows or [], before[1] if before else 0)
                changed += 1
            for gone in known.keys() - present:
                self._drop(gone, known[gone][1])
                changed += 1
            if changed:
                self._compact()
        return changed

    def _put(self, name: str, stamp: Stamp, rows: list[Row], held: int) -> None:
        """A file's rows in place of the `held` it had."""
        if held:
            self._drop_rows(name)
        numbered = list(zip(range(self._next_id, self._next_id + len(rows)), rows, strict=True))
        self._next_id += len(rows)
        self.db.executemany(
            "INSERT INTO docs (id, path, line, day, type, content) VALUES (?, ?, ?, ?, ?, ?)",
            [(i, name, *row[:4]) for i, row in numbered],
        )
        self.db.executemany(
            "INSERT INTO bullets (rowid, own, near1, near2, dates) VALUES (?, ?, ?, ?, ?)",
            [(i, *row[4:]) for i, row in numbered],
        )
        self._count((row[4:] for row in rows), +1)
        self.db.execute(
            "INSERT OR REPLACE INTO files (path, mtime_ns, ctime_ns, ino, size, days, rows)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (name, *stamp, len(rows)),
        )

    def _drop(self, name: str, held: int) -> None:
        if held:
            self._drop_rows(name)
        self.db.execute("DELETE FROM files WHERE path = ?", (name,))

    def _drop_rows(self, name: str) -> None:
        old = self.db.execute(
            "SELECT own, near1, near2, dates FROM bullets"
            " WHERE rowid IN (SELECT id FROM docs WHERE path = ?)",
            (name,),
        ).fetchall()
        self._count(old, -1)
        self.db.execute(
            "DELETE FROM bullets WHERE rowid IN (SELECT id FROM docs WHERE path = ?)", (name,)
        )
        self.db.execute("DELETE FROM docs WHERE path = ?", (name,))

    def _count(self, rows: Iterable[tuple[str, ...]], sign: int) -> None:
        """Keep `terms` the number of rows that hold each term, in any column (what FTS5
        matches a term in): what a question's terms are chosen by."""
        held: Counter[str] = Counter()
        for columns in rows:
            held.update(set(" ".join(columns).split()))
        self.db.executemany(
            "INSERT INTO terms (term, rows) VALUES (?, ?)"
            " ON CONFLICT (term) DO UPDATE SET rows = rows + excluded.rows",
            ((term, sign * n) for term, n in held.items()),
        )
        if sign < 0:
            self.db.executemany(
                "DELETE FROM terms WHERE term = ? AND rows <= 0", ((term,) for term in held)
            )

    def _compact(self) -> None:
        """A bounded share of FTS5's merge work, and the pages freed: what a refresh deleted
        is reclaimed instead of piling up with every touch of a journal."""
        self.db.execute("INSERT INTO bullets (bullets, rank) VALUES ('merge', ?)", (MERGE_PAGES,))
        (free,) = self.db.execute("PRAGMA freelist_count").fetchone()
        for _ in range(int(free)):  # Python's sqlite3 steps the pragma once: one page a call
            self.db.execute("PRAGMA incremental_vacuum(1)")

    def search(
        self, query: str, limit: int, today: date, stages: Stages | None = None
    ) -> list[Hit]:
        """The best `limit` bullets and facts for a question, best first."""
        stages = stages or Stages()
        asked = self.terms(query, today, stages)
        if not asked:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in asked)
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

    def terms(self, query: str, today: date, stages: Stages | None = None) -> list[str]:
        """The terms of a question the index is asked for: its rarest (terms.bounded)."""
        stages = stages or Stages()
        wanted = query_terms(query) + (query_tokens(query, today) if stages.dates else [])
        wanted = list(dict.fromkeys(wanted))
        if not wanted:
            return []
        rows = dict(
            self.db.execute(
                "SELECT term, rows FROM terms WHERE term IN (SELECT value FROM json_each(?))",
                (json.dumps(wanted),),
            ).fetchall()
        )
        return bounded(wanted, rows)


def _empty(info: os.stat_result) -> bool:
    """A plain file with nothing in it: no rows, whatever reading it would say."""
    return stat.S_ISREG(info.st_mode) and info.st_size == 0


# The days a journal file holds bullets for, each with every form of that day (in the order
# memfuse.workspace.forms reads them): a file's rows are the day's bullets read from it.
Days = tuple[tuple[date, tuple[Source, ...]], ...]


def _files(workspace: Workspace) -> dict[str, tuple[os.PathLike[str], Days]]:
    """What the index holds, by the location of each file: every form of every day's journal
    (memfuse.workspace.layout.Workspace.sources) with the days it holds, and MEMORY.md."""
    by_file: dict[str, tuple[Path, list[tuple[date, tuple[Source, ...]]]]] = {}
    for day, forms in workspace.sources().items():
        for form in forms:
            name = workspace.location(form.path)
            by_file.setdefault(name, (form.path, []))[1].append((day, forms))
    found: dict[str, tuple[os.PathLike[str], Days]] = {
        name: (path, tuple(days)) for name, (path, days) in by_file.items()
    }
    found[workspace.location(workspace.memory_md)] = (workspace.memory_md, ())
    return found


def _to_read_again(
    stamps: dict[str, Stamp], known: dict[str, tuple[Stamp, int]], present: set[str]
) -> list[str]:
    """The files to index again, in the order listed: those that changed, and every file
    holding a day one of them holds or held (which of a form's bullets are the day's, and
    where, depends on the day's other forms: memfuse.workspace.forms)."""
    changed = {name for name, stamp in stamps.items() if known.get(name, (None, 0))[0] != stamp}
    touched = {day for name in changed for day in stamps[name][4].split(",") if day}
    for name in changed | (known.keys() - present):
        if name in known:
            touched |= {day for day in known[name][0][4].split(",") if day}
    return [
        name
        for name, stamp in stamps.items()
        if name in changed or not touched.isdisjoint(stamp[4].split(","))
    ]


class DaysRead:
    """The days one refresh reads, each read once and made into rows once, grouped by the file
    each bullet was read from: files are listed day by day, so the last few days are kept
    (bounded, whatever the number of days).

    The cost is linear in a day's forms and bullets: a day with many archived copies (`D.md`,
    `D.1.md` … `D.200.md`) is read, unioned, classified and given its neighbours' terms once,
    and each of its files takes its own rows from that (docs/decisions.md 165); asking for the
    day's whole union once per file would cost files × bullets.
    """

    KEEP = 32

    def __init__(
        self, workspace: Workspace, classifier: Classifier, warn: Callable[[str], None]
    ) -> None:
        self.workspace = workspace
        self.classifier = classifier
        self.warn = warn
        self.weeklies = Weeklies(workspace)
        self.read: dict[date, DayRows | None] = {}
        self.blocked: set[date] = set()  # days with a form that could not be read

    def day(self, day: date, forms: tuple[Source, ...]) -> DayRows | None:
        """The day's rows by file; None when none of its forms holds it (or the first cannot
        be read)."""
        if day not in self.read:
            if len(self.read) >= self.KEEP:
                del self.read[next(iter(self.read))]

            def unreadable(_path: Path, _why: str) -> None:
                self.blocked.add(day)

            journal = self.workspace.read_day(
                day, forms, self.warn, self.weeklies, unreadable=unreadable
            )
            self.read[day] = None if journal is None else _day_rows(journal, self.classifier)
        return self.read[day]


@dataclass(frozen=True)
class DayRows:
    """One day's rows, by the file each bullet was read from, and every file read for it."""

    by_file: dict[Path, list[Row]]
    files: frozenset[Path]


def _day_rows(journal: Journal, classifier: Classifier) -> DayRows:
    """The rows of a day's union, each under the file its bullet was read from (one pass)."""
    dates = " ".join(doc_tokens(journal.day))
    origins = journal.origins or (journal.path,) * len(journal.bullets)
    origin = {id(b): o for b, o in zip(journal.bullets, origins, strict=True)}
    by_file: dict[Path, list[Row]] = {}
    for bullet, own, near1, near2 in _with_neighbours(journal.bullets):
        kind = classifier.classify(bullet.text).type
        by_file.setdefault(origin[id(bullet)], []).append(
            (bullet.line, journal.day.isoformat(), kind, bullet.text, own, near1, near2, dates)
        )
    return DayRows(by_file, frozenset(journal.read))


def _rows(
    workspace: Workspace,
    path: os.PathLike[str],
    days: Days,
    days_read: DaysRead,
    warn: Callable[[str], None],
) -> list[Row] | None:
    """What to index of one file; None when it cannot be read."""
    if not days:  # MEMORY.md: facts, timeless, with no neighbours
        raw = workspace.read_memory_md(warn)
        if raw is None:
            return [] if not os.path.exists(path) else None
        text = decode(raw)[0]
        return [
            (n, None, "knowledge", fact, " ".join(doc_terms(fact)), "", "", "")
            for n, fact in memory_md_facts(text)
        ]
    rows: list[Row] = []
    for day, forms in days:
        read = days_read.day(day, forms)
        if read is None or Path(path) not in read.files:
            if day in days_read.blocked:
                return None  # the day cannot be read as far as this file
            continue  # a week without this day's section
        rows += read.by_file.get(Path(path), [])
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
