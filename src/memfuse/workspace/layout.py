"""The workspace: every path of its layout, and its Markdown read in every form (SPEC §2).

```
MEMORY.md                      long-term memory (memfuse reads it, backs it up)
RECENT.md                      written by `surface`
memory/YYYY-MM-DD.md           daily journals
memory/weekly/YYYY-MM-DD.md    weekly roll-ups, named by the week's Monday
memory/archive/                archived dailies and MEMORY.md backups
```

Nothing else in memfuse joins a path of this layout. Every read and write goes through the
confined file access (memfuse.confine): the workspace is the agent's, so each file in
it is attacker input. `journals(days)` is the one loop that reads the journals of a window.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from memfuse.confine import DEFAULT_READ_CAP, UnsafePath, WorkspaceFiles
from memfuse.state.folder import StateFolder
from memfuse.workspace.bullets import Bullet, Tally
from memfuse.workspace.forms import Part, union
from memfuse.workspace.journal import ParsedJournal, decode, parse_bytes
from memfuse.workspace.names import (
    ARCHIVED,
    ARCHIVED_NAME,
    DAILY,
    FIRST_DAY,
    LAST_DAY,
    NUMBERED_NAME,
    WEEKLY,
    looks_like_journal,
    monday_of,
    name_date,
)
from memfuse.workspace.position import JournalPosition
from memfuse.workspace.sections import split
from memfuse.workspace.weekly import Warn, Weeklies, heading_day


def _look(path: str) -> tuple[int, int, int, int, int]:
    """Inode, mode, size, time and change time of what a path names (the link itself when
    what it names is gone; zeros when there is nothing)."""
    try:
        info = os.stat(path)
    except OSError:
        try:
            info = os.stat(path, follow_symlinks=False)
        except OSError:
            return 0, 0, 0, 0, 0
    return info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns


@dataclass(frozen=True)
class Source:
    """Where a day's bullets live now: a file, and which form of the journal it is."""

    path: Path
    kind: str  # DAILY, ARCHIVED or WEEKLY


@dataclass(frozen=True)
class Journal:
    """One day's journal, parsed: its bullets, each at its position, from all the forms the
    day takes (memfuse.workspace.forms), and the files they were read from."""

    day: date
    path: Path  # the first form's file
    bullets: tuple[Bullet, ...]
    origins: tuple[Path, ...]  # each bullet's file, in step with `bullets`
    read: tuple[Path, ...]  # every file read for the day
    # False when a later form could not be read: its bullets are unknown, so none of the
    # day's synced bullets may be taken for gone.
    complete: bool
    # What the reading of each form (a roll-up's day section each) took, in the forms' order:
    # its list items and what each exclusion rule left out.
    tallies: tuple[tuple[Path, Tally], ...]

    def positioned(self) -> Iterator[tuple[JournalPosition, Bullet]]:
        for bullet in self.bullets:
            yield JournalPosition(self.day, bullet.key, bullet.n), bullet

    def located(self) -> Iterator[tuple[JournalPosition, Bullet, Path]]:
        """Each bullet at its position, with the file it is in."""
        for (position, bullet), path in zip(self.positioned(), self.origins, strict=True):
            yield position, bullet, path


class Workspace:
    """One agent's workspace, its layout and its Markdown."""

    def __init__(
        self, root: Path, state: Path | None = None, read_cap: int = DEFAULT_READ_CAP
    ) -> None:
        self.root = root
        self.files = WorkspaceFiles(root, read_cap)
        self._state = state  # memfuse's own state folder (memfuse.config chooses where)
        # The roll-ups read that hold a section for a day outside the week they name, with
        # why (by path, as last read): never synced, a person must move it.
        self.misplaced: dict[Path, str] = {}

    @functools.cached_property
    def state(self) -> StateFolder:
        """memfuse's own state folder; a Workspace made for its paths alone has none."""
        if self._state is None:
            raise ValueError(f"no state folder was given for the workspace {self.root}")
        return StateFolder(self._state)

    # --- the layout ----------------------------------------------------------------------
    @classmethod
    def meant_by(cls, root: Path) -> Path | None:
        """The workspace meant when `root` is its journals' folder (`-w …/workspace/memory`):
        a folder named as the journals' folder is, holding neither a journals' folder nor a
        MEMORY.md of its own; None when `root` may well be a workspace."""
        found = cls(root.parent)
        if root.name != found.journal_dir.name or not root.is_dir():
            return None
        inside = cls(root)
        if inside.journal_dir.is_dir() or inside.memory_md.exists():
            return None
        return found.root

    @functools.cached_property
    def journal_dir(self) -> Path:
        return self.root / "memory"

    def journal_path(self, day: date) -> Path:
        return self.journal_dir / f"{day.isoformat()}.md"

    def weekly_path(self, day: date) -> Path:
        """The roll-up of the week a day is in, named by its Monday."""
        return self.journal_dir / "weekly" / f"{monday_of(day).isoformat()}.md"

    @property
    def archive_dir(self) -> Path:
        return self.journal_dir / "archive"

    def memory_md_backup(self, day: date) -> Path:
        return self.archive_dir / f"MEMORY.md.bak-{day.isoformat()}"

    @property
    def memory_md(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def recent_md(self) -> Path:
        return self.root / "RECENT.md"

    @property
    def recent_kept(self) -> Path:
        """Where the lines of RECENT.md memfuse did not write are kept before it rewrites it."""
        return self.root / "RECENT.kept.md"

    @property
    def config_file(self) -> Path:
        """The workspace's own config file: tunables only (memfuse.config)."""
        return self.root / ".memfuse" / "config.toml"

    def location(self, path: Path) -> str:
        """A path as a person finds it in the workspace (`memory/2026-12-03.md`)."""
        found, top = os.fspath(path), os.fspath(self.root).rstrip("/") + "/"
        if found.startswith(top):  # as text: pathlib's relative_to costs a sync of many files
            return found[len(top) :]
        return "." if found == os.fspath(self.root) else found

    # --- the journals --------------------------------------------------------------------
    def daily_journals(self) -> dict[date, Path]:
        """Every entry named like a daily journal directly under memory/, by date.

        Whatever the entry is (a FIFO, a link, a folder) it is listed: reading it is what
        refuses it, with a warning, instead of skipping it in silence.
        """
        return _dated(self.journal_dir)

    def look_alikes(self) -> list[str]:
        """Names under memory/, memory/weekly/ and memory/archive/ that read like a journal's
        but are not (never read; reported, so that one cannot quietly stand in for the real
        journal beside it), as locations."""
        found: list[str] = []
        for folder in (self.journal_dir, self.journal_dir / "weekly", self.archive_dir):
            if folder.is_dir() and not folder.is_symlink():
                found += [self.location(p) for p in folder.iterdir() if looks_like_journal(p.name)]
        if self.archive_dir.is_dir() and not self.archive_dir.is_symlink():
            found += [
                self.location(p)
                for p in self.archive_dir.iterdir()
                if NUMBERED_NAME.fullmatch(p.name) and not ARCHIVED_NAME.fullmatch(p.name)
            ]
        return sorted(found)

    def archived_journals(self) -> dict[date, tuple[Path, ...]]:
        """The dailies `tidy --archive` moved into memory/archive/, by date: `YYYY-MM-DD.md`,
        then the late dailies archived after it (`YYYY-MM-DD.1.md`, `.2.md`…), in that order."""
        found: dict[date, list[tuple[int, Path]]] = {}
        for path in _entries(self.archive_dir):
            match = ARCHIVED_NAME.fullmatch(path.name)
            day = name_date(f"{match[1]}.md") if match else None
            if match is not None and day is not None:
                found.setdefault(day, []).append((int(match[2] or 0), path))
        return {day: tuple(p for _n, p in sorted(found[day])) for day in sorted(found)}

    def markdown_stamp(self) -> tuple[tuple[str, int, int, int, int, int], ...]:
        """A cheap fingerprint of every file the Markdown's views read (the entries of
        memory/, its archive and weekly folders, and MEMORY.md: name, inode, mode, size, time
        and change time, of the file a link names as the reads follow it): equal stamps mean
        nothing they read changed, an old time put back included. A long-lived reader
        (memfuse serve) checks it before it asks the recall index to refresh."""
        found: list[tuple[str, int, int, int, int, int]] = []
        for folder in (self.journal_dir, self.archive_dir, self.journal_dir / "weekly"):
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        found.append((entry.path, *_look(entry.path)))
            except OSError:
                found.append((str(folder), 0, 0, 0, 0, 0))
        found.append(("MEMORY.md", *_look(str(self.memory_md))))
        return tuple(sorted(found))

    def sources(self) -> dict[date, tuple[Source, ...]]:
        """Each day's journal in every form it takes, in the order the day's bullets are
        read (memfuse.workspace.forms): its archived copies, its daily, then its weekly
        roll-up (which may hold no section for it). The Markdown in all of them is the truth."""
        found: dict[date, list[Source]] = {}
        for day, paths in self.archived_journals().items():
            found.setdefault(day, []).extend(Source(p, ARCHIVED) for p in paths)
        for day, path in self.daily_journals().items():
            found.setdefault(day, []).append(Source(path, DAILY))
        for monday, path in _dated(self.journal_dir / "weekly").items():  # by their Monday
            for offset in range(7):
                day = monday + timedelta(days=offset)
                if FIRST_DAY <= day <= LAST_DAY:
                    found.setdefault(day, []).append(Source(path, WEEKLY))
        return {day: tuple(found[day]) for day in sorted(found)}

    def window(self, first: date, last: date) -> list[date]:
        """The days from `first` to `last` (both included) that have a daily journal."""
        return [d for d in self.daily_journals() if first <= d <= last]

    def journals(
        self,
        days: Iterable[date],
        warn: Warn,
        *,
        missing: Warn | None = None,
        unreadable: Callable[[Path, str], None] | None = None,
        read: Mapping[date, Journal] | None = None,
        passed: Callable[[date, Path], None] | None = None,
    ) -> Iterator[Journal]:
        """The journals of these days that can be read, oldest first, each the union of the
        day's forms (`read`: days this run has read already, not read again).

        A file that may not be read costs one warning (and is told to `unreadable`, with
        why); a day with no file is passed over, or told to `missing` when the caller asked
        for that day by name. A day none of whose files holds it (a roll-up with no section
        for it) gives no journal; each file read for it is told to `passed`, so that the
        caller can note it read.
        """
        available = self.sources()
        weeklies = Weeklies(self)
        for day in sorted(set(days)):
            if read is not None and day in read:
                yield read[day]
                continue
            forms = available.get(day, (Source(self.journal_path(day), DAILY),))
            journal = self.read_day(
                day, forms, warn, weeklies, unreadable=unreadable, passed=passed
            )
            if journal is not None:
                yield journal
            elif missing is not None and not any(os.path.lexists(f.path) for f in forms):
                missing(f"no journal for {day}: {forms[0].path} does not exist")

    def read_day(
        self,
        day: date,
        forms: Iterable[Source],
        warn: Warn,
        weeklies: Weeklies | None = None,
        *,
        given: Mapping[Path, bytes] | None = None,
        unreadable: Callable[[Path, str], None] | None = None,
        passed: Callable[[date, Path], None] | None = None,
    ) -> Journal | None:
        """A day's journal from its forms (`given`: the bytes of forms already read, by path,
        so that what is checked is what is then written elsewhere); None when
        none of them holds the day or the first one there cannot be read. A form that cannot
        be read ends the reading: the forms after it would count their bullets on from it.

        A roll-up read that has no section for the day is among the journal's files all the
        same (read, and settled as such); when no form holds the day, it is told to `passed`.
        """
        weeklies = weeklies if weeklies is not None else Weeklies(self)
        parts: list[Part] = []
        read: list[Source] = []
        empty: list[Path] = []  # roll-ups read that hold no section for the day
        tallies: list[tuple[Path, Tally]] = []
        complete = True
        for source in forms:
            problems: list[str] = []

            def note(message: str, problems: list[str] = problems) -> None:
                problems.append(message)
                warn(message)

            try:
                if given is not None and source.path in given:
                    sections: list[ParsedJournal] | None = [parse_bytes(given[source.path])]
                elif source.kind == WEEKLY:
                    sections = weeklies.sections(source.path, day, note)
                else:
                    parsed = self.read_journal(source.path, note)
                    sections = None if parsed is None else [parsed]
            except FileNotFoundError:
                continue
            if sections is None:
                if unreadable is not None:
                    unreadable(source.path, problems[-1] if problems else "cannot be read")
                complete = False
                break
            if not sections:
                empty.append(source.path)
                continue
            read.append(source)
            parts += [Part(source.path, section.bullets) for section in sections]
            tallies += [(source.path, section.tally) for section in sections]
        if not read:
            if complete and passed is not None:
                for path in empty:
                    passed(day, path)
            return None
        merged = union(parts)
        files = tuple(dict.fromkeys([*(s.path for s in read), *empty]))
        return Journal(day, read[0].path, merged.bullets, merged.origins, files, complete,
                       tuple(tallies))  # fmt: skip

    def read_weekly(
        self, path: Path, warn: Warn, odd: list[str] | None = None
    ) -> dict[date, list[ParsedJournal]] | None:
        """Each day's sections of a weekly roll-up, in file order, each parsed as a journal
        (the roll-up shifted its headings below the `## YYYY-MM-DD` line, so timed sections
        keep their keys and the bullets their positions); None, after one warning, when the
        file cannot or may not be read. A missing file raises FileNotFoundError. `odd` is
        given the day headings that name no real day."""
        raw = self._read(path, warn)
        if raw is None:
            return None
        found, impossible = split(decode(raw)[0], heading_day)
        if odd is not None:
            odd += impossible
        return found

    def read_journal(self, path: Path, warn: Warn) -> ParsedJournal | None:
        """A journal parsed, or None after one warning when it cannot or may not be read.

        A missing file raises FileNotFoundError: whether that is worth a word is the caller's.
        """
        raw = self._read(path, warn)
        if raw is None:
            return None
        parsed = parse_bytes(raw)
        if parsed.replaced_bytes:
            warn(f"{path} is not valid UTF-8; unreadable bytes were replaced by \ufffd")
        return parsed

    # --- MEMORY.md and RECENT.md ---------------------------------------------------------
    def read_memory_md(self, warn: Warn) -> bytes | None:
        """MEMORY.md's bytes; None (after one warning when it may not be read) without it."""
        try:
            return self._read(self.memory_md, warn, "MEMORY.md")
        except FileNotFoundError:
            return None

    def _read(self, path: Path, warn: Warn, name: str = "") -> bytes | None:
        """A file's bytes, or None after one warning when it cannot or may not be read (`name`:
        what the warning calls it). A missing file raises FileNotFoundError."""
        try:
            return self.files.read(path)
        except UnsafePath as exc:
            warn(f"{exc}; {name + ' is ' if name else ''}skipped")
        except FileNotFoundError:
            raise
        except OSError as exc:
            warn(f"cannot read {name or path}: {exc.strerror or exc}; skipped")
        return None


def _dated(folder: Path) -> dict[date, Path]:
    """The entries of a folder named like a journal, by date ({} without the folder)."""
    found = {day: path for path in _entries(folder) if (day := name_date(path.name)) is not None}
    return dict(sorted(found.items()))


def _entries(folder: Path) -> list[Path]:
    """The entries of a folder (none without it, or when it is not a folder)."""
    try:
        return list(folder.iterdir())  # its paths made cheaply: no parsing of each name
    except (FileNotFoundError, NotADirectoryError):
        return []
