"""The local full-text index of the Markdown side, for `memfuse recall`.

SQLite FTS5 in the state folder: one row per journal bullet (in every form) and per MEMORY.md
fact, with its location. A bullet's columns (the recipe measured in docs/recall-quality.md):
`own`, its terms; `near1`, `near2`, those of the bullets one and two away in its section (a
question is often answered by the bullet after the one that shares its words); `dates`, its
day's tokens. A question asks only its rarest terms (terms.bounded), so its cost is bounded.
A refresh is one transaction over the files that changed (an appended journal from its tail:
memfuse.recall.tail), then a bounded merge of FTS5's segments. The index is derived: deleting
it is safe.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.recall import tail, vectors, writes
from memfuse.recall.dates import around, query_tokens
from memfuse.recall.rows import DaysRead, Row, RowStamp, files_of, rows_of, to_read_again
from memfuse.recall.semantic import Embedder, best, closeness, standing
from memfuse.recall.terms import bounded, doc_terms, query_terms
from memfuse.state.folder import StateFolder
from memfuse.state.sqlite import immediate, open_or_set_aside, open_private_db
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Journal, Workspace

if TYPE_CHECKING:
    from memfuse.recall.semantic import Matrix

SCHEMA = f"""
PRAGMA auto_vacuum = INCREMENTAL;
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER, ctime_ns INTEGER, ino INTEGER, size INTEGER,
    days TEXT NOT NULL DEFAULT '', rows INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, line INTEGER NOT NULL, day TEXT,
    type TEXT NOT NULL, content TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE VIRTUAL TABLE IF NOT EXISTS bullets USING fts5(
    own, near1, near2, dates, tokenize = 'unicode61'
);
CREATE TABLE IF NOT EXISTS terms (term TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID;
{vectors.SCHEMA}{tail.SCHEMA}"""
# What read the index's rows: a build that reads the Markdown or lays out its tables otherwise
# bumps it, and an index of any other build is made again from the Markdown, silently.
READER = 3
WEIGHTS = (1.0, 0.5, 0.25, 1.0)  # own, near1, near2, dates: docs/recall-quality.md
REBUILT = "the local recall index was not usable: it is rebuilt from the Markdown"


@dataclass(frozen=True)
class Hit:
    location: str  # memory/2026-12-03.md:7 or MEMORY.md:4
    content: str
    type: str
    day: str | None
    rank: int  # 1 = best
    score: float  # BM25, or the closeness by meaning; higher is better
    id: int = 0  # the row's, in this index
    dated: bool = False  # of a day the question names, and sharing a word with it


class RecallIndexError(MemfuseError):
    """The recall index cannot be used, even after one it could not open was set aside."""


class RecallIndex:
    def __init__(self, state: StateFolder, clock: Callable[[], float] = time.monotonic) -> None:
        self.state = state
        self.clock = clock  # what an embedding's safety valve is counted by
        self.rebuilt = False  # an unusable index was set aside and started again
        self._next_id = 1  # the next row's id, while a refresh writes
        self._dropped: list[str] = []  # the texts of the rows a refresh deleted
        self.counted: Counter[str] = Counter()  # files read whole, bytes read, rows written
        # texts left without a vector by the last refresh: the next goes on with them
        self.unembedded = True
        self._embedded_by: str | None = None  # the model the last embedding was made with
        self._vectors: vectors.LoadedVectors | None = None
        try:
            self.db, old = open_or_set_aside(state, state.RECALL_INDEX, lambda: self._open(state))
        except (sqlite3.DatabaseError, UnsafePath) as again:
            why = f"the recall index {state.recall_index} cannot be used ({again})"
            raise RecallIndexError(why) from None
        self.rebuilt = old == "set aside"

    @staticmethod
    def _open(state: StateFolder) -> sqlite3.Connection:
        return open_private_db(state, state.RECALL_INDEX, SCHEMA, version=READER)

    def close(self) -> None:
        self.db.close()

    def refresh(
        self,
        workspace: Workspace,
        classifier: Classifier,
        warn: Callable[[str], None],
        embedder: Embedder | None = None,
        budget: vectors.EmbedBudget = vectors.QUESTION,
        given: Mapping[date, Journal] | None = None,
    ) -> int:
        """Re-index what changed, then embed what `budget` allows; the files re-read or dropped."""
        changed = self._refresh(workspace, classifier, warn, given)
        if changed:
            self._vectors = None
        if (
            embedder is not None
            and budget.count > 0
            and (changed or self.unembedded or embedder.name != self._embedded_by)
        ):
            self.embed(embedder, budget, warn)
        return changed

    def embed(
        self, embedder: Embedder, budget: vectors.EmbedBudget, warn: Callable[[str], None]
    ) -> int:
        """Vectors for what `budget` allows of the texts without one; a model that fails is
        one warning and recall by words alone (the index is derived: nothing is lost)."""
        try:
            done, self.unembedded, cut = vectors.embed_pending(
                self.db, embedder, budget, self.clock
            )
            self._embedded_by = embedder.name
        except sqlite3.Error:
            raise
        except Exception as exc:  # the model's own failure, whatever it is
            warn(f"recall by meaning is off this time: the model {embedder.name} failed ({exc})")
            return 0
        if cut:
            warn(f"recall by meaning: a time limit ({budget.seconds:g} s) cut it at {done} texts")
        if done:
            self._vectors = None
        return done

    def _refresh(
        self,
        workspace: Workspace,
        classifier: Classifier,
        warn: Callable[[str], None],
        given: Mapping[date, Journal] | None = None,
    ) -> int:
        wanted = files_of(workspace)
        changed = 0
        with immediate(self.db):
            known: dict[str, tuple[RowStamp, int]] = {
                row[0]: ((row[1], row[2], row[3], row[4], row[5]), row[6])
                for row in self.db.execute(
                    "SELECT path, mtime_ns, ctime_ns, ino, size, days, rows FROM files"
                )
            }
            (last,) = self.db.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()
            self._next_id = int(last) + 1
            stamps: dict[str, RowStamp] = {}
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
                # a plain file with nothing in it: no rows, whatever reading it would say
                empty[name] = stat.S_ISREG(info.st_mode) and info.st_size == 0
            days_read = DaysRead(workspace, classifier, warn, given)
            self._dropped = []
            for name in to_read_again(stamps, known, present):
                path, days = wanted[name]
                held = known[name][1] if name in known else 0
                day = tail.only_day(path, days)
                if day is not None and name in known and not empty[name]:
                    grown = tail.appended(self.db, workspace, name, path, day, classifier)
                    if grown is not None:  # only appended to: its last section on, re-read
                        self._put(name, stamps[name], grown.rows, held, grown.line)
                        tail.save(self.db, name, grown.checkpoint)
                        self.counted["bytes"] += grown.read
                        changed += 1
                        continue
                if empty[name]:  # a touched empty journal: nothing to read
                    rows: list[Row] | None = []
                else:
                    rows = rows_of(workspace, path, days, days_read, warn)
                    self.counted["bytes"] += stamps[name][3]
                    self.counted["whole"] += 1
                self._put(name, stamps[name], rows or [], held)
                tail.record(self.db, workspace, name, path, day, rows or [], stamps[name][3])
                changed += 1
            for gone in known.keys() - present:
                self._drop(gone, known[gone][1])
                changed += 1
            if changed:
                vectors.flag(self.db)
                vectors.drop_unheld(self.db, self._dropped)
                writes.compact(self.db)
        return changed

    def _put(
        self, name: str, stamp: RowStamp, rows: list[Row], held: int, from_line: int = 0
    ) -> None:
        """A file's rows from `from_line` on (all of them by default) in place of those it
        had there; `held`: the rows it had in all."""
        dropped = writes.drop_rows(self.db, name, from_line) if held else []
        self._dropped += dropped
        writes.put(self.db, name, stamp, rows, self._next_id, held - len(dropped))
        self._next_id += len(rows)
        self.counted["rows"] += len(rows)

    def _drop(self, name: str, held: int) -> None:
        if held:
            self._dropped += writes.drop_rows(self.db, name)
        self.db.execute("DELETE FROM files WHERE path = ?", (name,))
        self.db.execute("DELETE FROM tails WHERE path = ?", (name,))

    def search(
        self, query: str, limit: int, today: date, without: frozenset[str] = frozenset()
    ) -> list[Hit]:
        """The best `limit` bullets and facts for a question, best first; `without`: the
        stages switched off ("near", "dates": the benchmark measures each)."""
        asked = self.terms(query, today, dates="dates" not in without)
        if not asked:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in asked)
        weights = (WEIGHTS[0], 0.0, 0.0, WEIGHTS[3]) if "near" in without else WEIGHTS
        # only the best `limit` joined to their text: a common word matches most of a year
        rows = self.db.execute(
            "SELECT d.path, d.line, d.content, d.type, d.day, -best.score, d.id FROM ("
            " SELECT rowid AS id, bm25(bullets, ?, ?, ?, ?) AS score FROM bullets"
            " WHERE bullets MATCH ? ORDER BY score, rowid LIMIT ?"
            ") best JOIN docs d ON d.id = best.id ORDER BY best.score, best.id",
            (*weights, match, limit),
        ).fetchall()
        # A bullet of a day the question names that shares a word with it comes first.
        named = {t[1:] for t in asked if t[0] == "d" and t[1:].isdigit()}
        dated = [bool(day) and day.replace("-", "") in named and not set(doc_terms(content))
                 .isdisjoint(asked) for _p, _l, content, _k, day, _s, _i in rows]  # fmt: skip
        ranked = sorted(zip(rows, dated, strict=True), key=lambda row: not row[1])
        return [
            Hit(f"{path}:{line}", content, kind, day, rank, float(score), row_id, on_day)
            for rank, ((path, line, content, kind, day, score, row_id), on_day) in enumerate(
                ranked, start=1
            )
        ]

    def closest(
        self, query: Matrix, limit: int, model: str, also: Iterable[int] = (), alone: bool = False
    ) -> tuple[list[Hit], dict[int, float]]:
        """The `limit` rows closest to a question's vector (semantic.closeness; `alone`: its
        standing, no neighbour's), best first, scored by it; and the score of each row of
        `also` (ids) that has a vector."""
        loaded = self._loaded(model)
        if not loaded.ids:
            return [], {}
        cos = loaded.cosines(query)
        scores = standing(cos) if alone else closeness(cos, loaded.before, loaded.after)
        known = {i: float(scores[loaded.at[i]]) for i in also if i in loaded.at}
        return self._hits(best(scores, limit), loaded), known

    def _loaded(self, model: str) -> vectors.LoadedVectors:
        if self._vectors is None or self._vectors.model != model:
            self._vectors = vectors.load(self.db, model, self.state)
            self.counted["vector rows read"] += self._vectors.read
            if self._vectors.far:  # the next process maps what this one read
                self.keep_vectors(self._vectors)
        return self._vectors

    def keep_vectors(self, loaded: vectors.LoadedVectors | None = None, model: str = "") -> None:
        """Write the vectors' file (vectors.keep: best-effort)."""
        if vectors.keep(self.db, self.state, loaded, model):
            self.counted["vector files"] += 1

    def _hits(self, ranked: list[tuple[int, float]], loaded: vectors.LoadedVectors) -> list[Hit]:
        """The rows at these positions of `loaded`, in this order, with these scores."""
        wanted = [loaded.ids[n] for n, _score in ranked]
        found = {
            int(row[0]): row[1:]
            for row in self.db.execute(
                "SELECT id, path, line, content, type, day FROM docs"
                " WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(wanted),),
            )
        }
        hits = [(i, found[i], score) for i, (_n, score) in zip(wanted, ranked, strict=True)
                if i in found]  # fmt: skip
        return [
            Hit(f"{path}:{line}", content, kind, day, rank, score, i)
            for rank, (i, (path, line, content, kind, day), score) in enumerate(hits, start=1)
        ]

    def terms(self, query: str, today: date, *, dates: bool = True) -> list[str]:
        """The terms of a question the index is asked for: its rarest (terms.bounded). A day
        said by an event (memfuse.recall.dates.around) is the day of the event's best bullet by
        words, moved; the event's own words are not asked (its bullet is not the answer)."""
        said = around(query) if dates else None
        wanted = query_terms(query.replace(said[2], " ") if said else query)
        wanted += query_tokens(query, today) if dates else []
        if said is not None:
            days = [h.day for h in self.search(said[0], 10, today, frozenset({"dates"})) if h.day]
            if days:
                wanted.append(f"d{date.fromisoformat(days[0]) + timedelta(said[1]):%Y%m%d}")
        wanted = list(dict.fromkeys(wanted))
        if not wanted:
            return []
        return bounded(wanted, self.held(wanted))

    def held(self, terms: list[str]) -> dict[str, int]:
        """How many rows hold each of these terms (a term no row holds is left out)."""
        return dict(
            self.db.execute(
                "SELECT term, rows FROM terms WHERE term IN (SELECT value FROM json_each(?))",
                (json.dumps(terms),),
            ).fetchall()
        )


def open_index(state: StateFolder, warn: Callable[[str], None]) -> RecallIndex | None:
    """The index, opened (started again when unusable, and said so); None, with one warning,
    when it cannot be used at all: recall then answers without the journals."""
    try:
        index = RecallIndex(state)
    except (MemfuseError, OSError) as exc:
        warn(f"the local recall index cannot be used: {exc}")
        return None
    if index.rebuilt:
        warn(REBUILT)
    return index


def catch_up(
    index: RecallIndex,
    workspace: Workspace,
    classifier: Classifier,
    warn: Callable[[str], None],
    embedder: Embedder | None = None,
) -> bool:
    """Bring an open index up to date for a question (embedding within vectors.QUESTION);
    False, with one warning, when another process held it past the busy timeout: it answers
    as it stands."""
    try:
        index.refresh(workspace, classifier, warn, embedder, vectors.QUESTION)
    except (sqlite3.Error, OSError) as exc:
        warn(f"the local recall index was not refreshed ({exc}): it answers as it was")
        return False
    return True


def refresh_index(
    workspace: Workspace,
    classifier: Classifier,
    warn: Callable[[str], None],
    embedder: Embedder | None = None,
    budget: vectors.EmbedBudget = vectors.RUN,
    given: Mapping[date, Journal] | None = None,
) -> tuple[int, int] | None:
    """Bring the index up to date (sync, by words alone; a run after the lock, with
    `embedder` within `budget`): the files re-read and the texts embedded, or None, with one
    warning, when the index cannot be used (best-effort: it is derived). `given`: days the
    caller read and checked unchanged since, not read again."""
    index = open_index(workspace.state, warn)
    if index is None:
        return None
    try:
        changed = index.refresh(workspace, classifier, warn, None, budget, given)
        embedded = index.embed(embedder, budget, warn) if embedder is not None else 0
        if embedder is not None:  # after the run's embedding: the questions map the file
            index.keep_vectors(model=embedder.name)
        return changed, embedded
    except (sqlite3.Error, OSError) as exc:
        warn(f"the local recall index was not refreshed: {exc}")
        return None
    finally:
        index.close()
