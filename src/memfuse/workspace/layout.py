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

import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path

from memfuse.confine import DEFAULT_READ_CAP, UnsafePath, WorkspaceFiles
from memfuse.state.folder import StateFolder
from memfuse.workspace.journal import Bullet, ParsedJournal, decode, parse, parse_bytes
from memfuse.workspace.position import JournalPosition

Warn = Callable[[str], None]

# Only ASCII digits and a real date name a journal (SPEC §3): `\d` would take other scripts'
# digits, and `$` a name ending in a newline.
JOURNAL_NAME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\.md")


# The days a journal may be for. A journal dated far from any agent's life (`0001-01-01`,
# `9999-12-31`) is named and skipped: every window, week and neighbour memfuse computes from a
# day then stays a real date (docs/decisions.md 106).
FIRST_DAY, LAST_DAY = date(1900, 1, 1), date(2999, 12, 31)

# What a person would take for a journal's name: other scripts' digits, full-width forms, a
# trailing space or newline, `.MD`, an impossible or extreme date. Never a journal; always
# reported.
_LOOSE_NAME = re.compile(r"\d{4}-\d{2}-\d{2}\.md", re.IGNORECASE)


def looks_like_journal(name: str) -> bool:
    """A name that is not a journal's but reads like one (and could hide a real one)."""
    loose = unicodedata.normalize("NFKC", name).strip()
    return _LOOSE_NAME.fullmatch(loose) is not None and journal_date(Path(name)) is None


def journal_date(path: Path) -> date | None:
    """The date a journal's file name gives, or None for any other file."""
    match = JOURNAL_NAME.fullmatch(path.name)
    if match is None:
        return None
    try:
        day = date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None
    return day if FIRST_DAY <= day <= LAST_DAY else None


def monday_of(day: date) -> date:
    return day - timedelta(days=day.weekday())


# The forms a day's journal takes, in the order memfuse reads them: the daily itself, the daily
# moved to memory/archive/ by `tidy --archive`, the day's section of its weekly roll-up.
DAILY, ARCHIVED, WEEKLY = "daily", "archived", "weekly"
_WEEKLY_SECTION = re.compile(r"^## ([0-9]{4}-[0-9]{2}-[0-9]{2})[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class Source:
    """Where a day's bullets live now: a file, and which form of the journal it is."""

    day: date
    path: Path
    kind: str  # DAILY, ARCHIVED or WEEKLY


@dataclass(frozen=True)
class Journal:
    """One day's journal, parsed: its bullets, each at its position, and where it was read."""

    day: date
    path: Path
    bullets: tuple[Bullet, ...]
    kind: str = DAILY

    @classmethod
    def parse(cls, day: date, path: Path, raw: bytes) -> Journal:
        """A journal from bytes already read (tidy reads them once, to check and to roll up)."""
        return cls(day, path, parse_bytes(raw).bullets)

    def positioned(self) -> Iterator[tuple[JournalPosition, Bullet]]:
        for bullet in self.bullets:
            yield JournalPosition(self.day, bullet.key, bullet.n), bullet


class Workspace:
    """One agent's workspace, its layout and its Markdown."""

    def __init__(
        self, root: Path, state: Path | None = None, read_cap: int = DEFAULT_READ_CAP
    ) -> None:
        self.root = root
        self.files = WorkspaceFiles(root, read_cap)
        # memfuse's own state: outside the workspace unless told otherwise (memfuse.config);
        # a Workspace made without one (a test, a benchmark) keeps it in the legacy place.
        self.state = StateFolder(state if state is not None else self.legacy_state)

    # --- the layout ----------------------------------------------------------------------
    @property
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
    def legacy_state(self) -> Path:
        """Where memfuse kept its state before it moved out of the agent's reach: read once,
        to migrate it (memfuse.state.legacy), and ignored after that."""
        return self.root / ".memfuse"

    @property
    def config_file(self) -> Path:
        """The workspace's own config file: tunables only (memfuse.config)."""
        return self.root / ".memfuse" / "config.toml"

    def location(self, path: Path) -> str:
        """A path as a person finds it in the workspace (`memory/2026-12-03.md`)."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

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
        return sorted(found)

    def archived_journals(self) -> dict[date, Path]:
        """The dailies `tidy --archive` moved into memory/archive/, by date."""
        return _dated(self.archive_dir)

    def weekly_rollups(self) -> dict[date, Path]:
        """The weekly roll-ups, by the Monday that names them."""
        return _dated(self.journal_dir / "weekly")

    def markdown_stamp(self) -> tuple[tuple[str, int, int, int, int], ...]:
        """A cheap fingerprint of every file the Markdown's views read (the entries of
        memory/, its archive and weekly folders, and MEMORY.md: name, inode, mode, size and
        time, never followed): equal stamps mean nothing they read changed. A long-lived
        reader (memfuse serve) checks it before it asks the recall index to refresh."""
        found: list[tuple[str, int, int, int, int]] = []
        for folder in (self.journal_dir, self.archive_dir, self.journal_dir / "weekly"):
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        info = entry.stat(follow_symlinks=False)
                        found.append((entry.path, info.st_ino, info.st_mode, info.st_size,
                                      info.st_mtime_ns))  # fmt: skip
            except OSError:
                found.append((str(folder), 0, 0, 0, 0))
        try:
            info = os.stat(self.memory_md, follow_symlinks=False)
            found.append(("MEMORY.md", info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns))
        except OSError:
            found.append(("MEMORY.md", 0, 0, 0, 0))
        return tuple(sorted(found))

    def sources(self) -> dict[date, Source]:
        """Each day's journal where it lives now, in every form memfuse produces: the daily,
        else its archived copy, else (its daily and archived copy both gone) the day's section
        of its weekly roll-up. The Markdown in all these forms is the truth."""
        found = {d: Source(d, p, DAILY) for d, p in self.daily_journals().items()}
        for day, path in self.archived_journals().items():
            found.setdefault(day, Source(day, path, ARCHIVED))
        for monday, path in self.weekly_rollups().items():
            for offset in range(7):
                day = monday + timedelta(days=offset)
                found.setdefault(day, Source(day, path, WEEKLY))
        return dict(sorted(found.items()))

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
    ) -> Iterator[Journal]:
        """The daily journals of these days that can be read, oldest first, each parsed.

        A journal that may not be read costs one warning (and is told to `unreadable`, with
        why); one that does not exist is passed over, or told to `missing` when the caller
        asked for that day by name.
        """
        available = self.sources()
        for day in sorted(set(days)):
            source = available.get(day, Source(day, self.journal_path(day), DAILY))
            problems: list[str] = []

            def note(message: str, problems: list[str] = problems) -> None:
                problems.append(message)
                warn(message)

            try:
                parsed = self.read_source(source, note)
            except FileNotFoundError:
                parsed = None
                if missing is not None and not problems:
                    missing(f"no journal for {day}: {source.path} does not exist")
            if parsed is None and problems and unreadable is not None:
                unreadable(source.path, problems[-1])
            if parsed is not None:
                yield Journal(day, source.path, parsed.bullets, source.kind)

    def read_source(self, source: Source, warn: Warn) -> ParsedJournal | None:
        """A day's journal in the form `source` names; FileNotFoundError when it is not there
        (a weekly roll-up without the day's section included)."""
        if source.kind != WEEKLY:
            return self.read_journal(source.path, warn)
        sections = self.read_weekly(source.path, warn)
        if source.day not in sections:
            raise FileNotFoundError(source.path)
        return sections[source.day]

    def read_weekly(self, path: Path, warn: Warn) -> dict[date, ParsedJournal]:
        """Each day's section of a weekly roll-up, parsed as that day's journal (the roll-up
        shifted its headings below the `## YYYY-MM-DD` line, so timed sections keep their
        keys and the bullets their positions)."""
        try:
            raw = self.files.read(path)
        except UnsafePath as exc:
            warn(f"{exc}; skipped")
            return {}
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            warn(f"cannot read {path}: {exc.strerror or exc}; skipped")
            return {}
        text, _replaced = decode(raw)
        heads = list(_WEEKLY_SECTION.finditer(text))
        found: dict[date, ParsedJournal] = {}
        for n, head in enumerate(heads):
            day = journal_date(Path(f"{head[1]}.md"))
            if day is None:
                continue
            end = heads[n + 1].start() if n + 1 < len(heads) else len(text)
            body = text[head.end() : end]
            offset = text.count("\n", 0, head.end())  # lines are the weekly file's own
            bullets = tuple(replace(b, line=b.line + offset) for b in parse(body))
            found.setdefault(day, ParsedJournal(bullets, replaced_bytes=False))
        return found

    def read_journal(self, path: Path, warn: Warn) -> ParsedJournal | None:
        """A journal parsed, or None after one warning when it cannot or may not be read.

        A missing file raises FileNotFoundError: whether that is worth a word is the caller's.
        """
        try:
            raw = self.files.read(path)
        except UnsafePath as exc:
            warn(f"{exc}; skipped")
            return None
        except FileNotFoundError:
            raise
        except OSError as exc:
            warn(f"cannot read {path}: {exc.strerror or exc}; skipped")
            return None
        parsed = parse_bytes(raw)
        if parsed.replaced_bytes:
            warn(f"{path} is not valid UTF-8; unreadable bytes were replaced by \ufffd")
        return parsed

    # --- MEMORY.md and RECENT.md ---------------------------------------------------------
    def read_memory_md(self, warn: Warn) -> bytes | None:
        """MEMORY.md's bytes; None (after one warning when it may not be read) without it."""
        try:
            return self.files.read(self.memory_md)
        except FileNotFoundError:
            return None
        except UnsafePath as exc:
            warn(f"{exc}; MEMORY.md is skipped")
            return None
        except OSError as exc:
            warn(f"cannot read MEMORY.md: {exc.strerror or exc}; skipped")
            return None


def _dated(folder: Path) -> dict[date, Path]:
    """The entries of a folder named like a journal, by date ({} without the folder)."""
    if not folder.is_dir():
        return {}
    found = {}
    for path in folder.iterdir():
        day = journal_date(path)
        if day is not None:
            found[day] = path
    return dict(sorted(found.items()))
