"""What the recall index holds of the Markdown: the rows of each file, read day by day.

A row is one journal bullet (of whichever form of its day) or one MEMORY.md fact."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from memfuse.recall.dates import doc_tokens
from memfuse.recall.terms import doc_terms
from memfuse.text.classify import Classifier
from memfuse.workspace.bullets import Bullet
from memfuse.workspace.journal import decode
from memfuse.workspace.layout import Journal, Source, Workspace
from memfuse.workspace.memory_md import memory_md_facts
from memfuse.workspace.weekly import Weeklies

# What a file is known by: mtime, ctime (an editor, `rsync -t` or `git checkout` can put an old
# mtime back on a same-size edit; the ctime it cannot), inode (a file saved by renaming a new
# one over it), size, and the days it is the truth for.
RowStamp = tuple[int, int, int, int, str]

# line, day, type, text, then the terms of the four columns: own, near1, near2, dates
Row = tuple[int, str | None, str, str, str, str, str, str]
# The days a journal file holds bullets for, each with every form of that day (in the order
# memfuse.workspace.forms reads them): a file's rows are the day's bullets read from it.
Days = tuple[tuple[date, tuple[Source, ...]], ...]


def files_of(workspace: Workspace) -> dict[str, tuple[os.PathLike[str], Days]]:
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


class DaysRead:
    """The days one refresh reads, each read once and made into rows once, grouped by the file
    each bullet was read from (files are listed day by day: the last KEEP days are kept). A day
    of many archived copies (`D.md` … `D.200.md`) costs its bullets, not files × bullets."""

    KEEP = 32

    def __init__(
        self,
        workspace: Workspace,
        classifier: Classifier,
        warn: Callable[[str], None],
        given: Mapping[date, Journal] | None = None,
    ) -> None:
        self.workspace = workspace
        self.given = given or {}  # days a sync read whole, unchanged since: not read again
        self.classifier = classifier
        self.warn = warn
        self.weeklies = Weeklies(workspace)
        self.read: dict[date, DayRows | None] = {}
        self.blocked: set[date] = set()  # days with a form that could not be read

    def day(self, day: date, forms: tuple[Source, ...]) -> DayRows | None:
        """The day's rows by file; None when no form holds it (or the first is unreadable)."""
        if day not in self.read:
            if len(self.read) >= self.KEEP:
                del self.read[next(iter(self.read))]

            def unreadable(_path: Path, _why: str) -> None:
                self.blocked.add(day)

            journal = self.given.get(day) or self.workspace.read_day(
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
    origin = {id(b): o for b, o in zip(journal.bullets, journal.origins, strict=True)}
    by_file: dict[Path, list[Row]] = {}
    for bullet, row in bullet_rows(journal.bullets, journal.day, classifier):
        by_file.setdefault(origin[id(bullet)], []).append(row)
    return DayRows(by_file, frozenset(journal.read))


def rows_of(
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
            for n, fact in memory_md_facts(text, header=False)
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


def bullet_rows(
    bullets: tuple[Bullet, ...], day: date, classifier: Classifier
) -> Iterator[tuple[Bullet, Row]]:
    """Each bullet with its row: its terms, those of the bullets one and two away in its
    section (never across a section: a section is one sitting of the journal), its day's.
    A day's union (`_day_rows`) and one file read alone (memfuse.recall.tail) both read so."""
    dates = " ".join(doc_tokens(day))
    sections: dict[str, list[Bullet]] = {}
    for bullet in bullets:
        sections.setdefault(bullet.key, []).append(bullet)
    terms = {id(b): " ".join(doc_terms(b.text)) for b in bullets}
    for members in sections.values():
        for n, bullet in enumerate(members):

            def around(step: int, n: int = n, members: list[Bullet] = members) -> str:
                near = [members[i] for i in (n - step, n + step) if 0 <= i < len(members)]
                return " ".join(terms[id(b)] for b in near)

            kind = classifier.classify(bullet.text).type
            own = terms[id(bullet)]
            yield bullet, (bullet.line, day.isoformat(), kind, bullet.text, own, around(1),
                           around(2), dates)  # fmt: skip


def to_read_again(
    stamps: dict[str, RowStamp], known: dict[str, tuple[RowStamp, int]], present: set[str]
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
