"""One bullet appended to today's journal (`memfuse serve`'s `note` tool): the agent writes its
memory through memfuse, and the Markdown stays the truth (docs/security.md, "The note tool").

- The text is one bullet of plain text or nothing (memfuse.workspace.note_text).
- It goes under the section the journal ends in when that is a timed section of the current
  hour (not one ahead of the clock), else under a new `## HH:MM` at the end; a journal that
  is not there is made as the examples' are (`# Journal`, the section, the bullet).
- Before anything is written, the journal with the note is read back by the journal reader
  (memfuse.workspace.journal): every bullet it held is still there, unchanged, and the note
  is one more, with exactly its text, in the section meant. A journal that ends inside an
  open code fence or HTML comment or block would swallow it: refused, nothing written. Only
  the tail is read back: from the last note's line (`Marks`), or after one reading of the
  whole file from its last bullet at column 0.
- The file's bytes are kept as they are; the note is added in its encoding (UTF-8, or UTF-16/
  UTF-32 announced by a byte-order mark) and its line ending (CRLF when its lines end so).
- Appended on one confined descriptor, all or nothing, once, with no lock
  (memfuse.workspace.note_file); a new journal is written atomically through the confined
  writer, only while there is still none.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path

from memfuse.confine import FileChanged, UnsafePath, Writer
from memfuse.errors import WorkspaceError
from memfuse.host import DREAMING_TAG
from memfuse.workspace import note_file
from memfuse.workspace.bullets import NO_TIME, ORDERED_FROM, Bullet
from memfuse.workspace.comments import fence_closes, fence_opened
from memfuse.workspace.journal import byte_order, decode, parse
from memfuse.workspace.layout import Workspace
from memfuse.workspace.note_file import Mark, Marks, PositionalReader, View
from memfuse.workspace.note_text import NOTE_MAX, NoteRefused, checked_text
from memfuse.workspace.position import JournalPosition

__all__ = ["NOTE_MAX", "NoteRefused", "Noted", "append_note", "checked_text", "plan"]

NOTE_TRIES = 5  # reads of a journal another writer keeps changing before the note gives up
NEW_JOURNAL = "# Journal\n"  # as the examples' journals open (examples/workspace/memory/)


class _Changed(Exception):
    """A journal appeared while the note made one: read it again."""


@dataclass(frozen=True)
class Noted:
    """Where a note was written: its file, line and position (its URI once synced)."""

    path: Path
    bullet: Bullet
    position: JournalPosition
    made: str | None  # "journal" or "section" when the note made it, else None


def append_note(
    workspace: Workspace,
    text: str,
    now: datetime,
    *,
    marks: Marks | None = None,
    read: PositionalReader = os.pread,
    write: Writer = os.write,
) -> Noted:
    """Append `text` as one bullet to `now`'s journal; NoteRefused when it may not be.

    `marks` (the serving process's) let a note read the journal's tail only; `read` and
    `write` are os.pread and os.write, injected by tests."""
    value = checked_text(text)
    path = workspace.journal_path(now.date())
    shown = workspace.location(path)
    marks = marks if marks is not None else Marks()
    files = workspace.files
    expected = 0  # after a write the path no longer held: the note's lines to look for
    made: str | None = None
    for _ in range(NOTE_TRIES):
        try:
            with note_file.opened(files.root, path, files.read_cap) as journal:
                if journal is None:  # none yet, or the one the note went into was moved
                    return _create(workspace, path, value, now, shown)
                if expected:
                    found = _landed(journal, read, value, expected, path, now.date())
                    if found is not None:
                        return replace(found, made=made)
                    expected = 0
                view = journal.view(marks, read)
                try:
                    planned = plan(view, value, now, shown)
                except ReadWhole:  # a tail whose counts only the whole file gets right
                    view = View(journal.read(read, 0, journal.size), None)
                    planned = plan(view, value, now, shown)
                made = planned.made
                if journal.size + len(planned.suffix) > files.read_cap:
                    raise NoteRefused(
                        f"{shown} would pass the {files.read_cap / 1048576:g} MiB read limit"
                        " with the note; nothing written"
                    )
                journal.append(planned.suffix, write)
                if not journal.landed_in_place(planned.suffix):
                    # An editor's rename (or another appender) came between: what the file
                    # the note went into holds of it is what the next try looks for (read
                    # under the cap: another appender may still be making the file grow).
                    held = journal.read(read, 0, files.read_cap)
                    expected = note_file.count_lines(held, value)
                    continue
                marks.keep(journal.real, planned.mark(journal, view))
                bullet = planned.bullet
        except (_Changed, FileChanged):
            continue
        except WorkspaceError as exc:  # a path memfuse refuses, a folder it cannot make
            raise NoteRefused(f"{exc}; nothing written") from None
        except note_file.NotTakenBack as exc:
            raise NoteRefused(
                f"cannot write {shown}: {exc.strerror}; another writer appended after the"
                " note's part, which stays at the journal's end"
            ) from None
        except OSError as exc:
            raise NoteRefused(
                f"cannot write {shown}: {exc.strerror or exc}; nothing written"
            ) from None
        position = JournalPosition(now.date(), bullet.key, bullet.n)
        return Noted(path, bullet, position, planned.made)
    if expected:  # the last try wrote the note into a file replaced since: is it there?
        try:
            with note_file.opened(files.root, path, files.read_cap) as journal:
                found = (
                    _landed(journal, read, value, expected, path, now.date())
                    if journal is not None
                    else None
                )
        except (OSError, UnsafePath, FileChanged):
            found = None
        if found:
            return replace(found, made=made)
    raise NoteRefused(f"{shown} kept changing while the note was written ({NOTE_TRIES} tries)")


def _create(workspace: Workspace, path: Path, value: str, now: datetime, shown: str) -> Noted:
    """A journal made for the note: written whole, only while there is still none."""
    planned = plan(None, value, now, shown)
    try:
        workspace.files.write(path, planned.suffix, create_parents=True, new_only=True)
    except FileChanged:
        raise _Changed from None
    bullet = planned.bullet
    return Noted(path, bullet, JournalPosition(now.date(), bullet.key, bullet.n), planned.made)


def _landed(
    journal: note_file.OpenJournal,
    read: PositionalReader,
    value: str,
    expected: int,
    path: Path,
    day: date,
) -> Noted | None:
    """The note, when the journal now holds as many of its lines as the file it was written
    into did (the rename that replaced that file carried it); None when it must be written."""
    raw = journal.read(read, 0, journal.size)
    if note_file.count_lines(raw, value) < expected:
        return None
    mine = [b for b in parse(decode(raw)[0]) if b.text == value]
    if not mine:
        return None
    bullet = mine[-1]
    return Noted(path, bullet, JournalPosition(day, bullet.key, bullet.n), None)


@dataclass(frozen=True)
class Planned:
    """What a note adds to a journal, and how it reads there."""

    suffix: bytes  # the bytes appended (the whole file for a new journal)
    line: bytes  # the note's own line, the suffix's end
    bullet: Bullet  # the note as the reader reads the whole file
    made: str | None
    encoding: str
    before: Counter[tuple[str, bool]]  # the bullets before the note, by section and kind

    def mark(self, journal: note_file.OpenJournal, view: View) -> Mark:
        """Where this note's line is, for the next note to read from, with the digest of the
        bytes before it (made on from the view's: none is read again)."""
        digest = view.before.copy()
        digest.update(view.raw + self.suffix[: -len(self.line)])
        start = journal.size + len(self.suffix) - len(self.line)
        base = tuple((key, numbered, n) for (key, numbered), n in sorted(self.before.items()))
        return Mark(journal.dev, journal.ino, start, self.line, self.bullet.line,
                    self.bullet.key, base, self.encoding, digest.hexdigest())  # fmt: skip


@dataclass(frozen=True)
class _Frame:
    """How a tail reads as the whole file does: under its section's heading, its lines and
    counts after those before it. The whole text is the frame of no section (`key` None)."""

    key: str | None = None
    base: tuple[tuple[str, bool, int], ...] = ()  # bullets before it: (section, numbered, n)
    line: int = 1  # the tail's first line in the file

    def bullets(self, text: str) -> list[Bullet]:
        """The tail's bullets, counted on from `base` as the reader's Places count them: a
        section's `-` items from 1 and numbered ones from ORDERED_FROM + 1 until its `-` items
        reach ORDERED_FROM, then every item the next count (`base` holds those below and above
        ORDERED_FROM, which tell the two apart)."""
        if self.key is None:
            return parse(text)
        heading = f"## {self.key[:2]}:{self.key[2:]}\n" if self.key != NO_TIME else "# Journal\n"
        counts = {(k, numbered): n for k, numbered, n in self.base}
        found = []
        for b in parse(heading + text):
            if b.n == ORDERED_FROM:  # the tail alone no longer tells its two kinds apart
                raise ReadWhole
            low, high = counts.get((b.key, False), 0), counts.get((b.key, True), 0)
            numbered = low >= ORDERED_FROM or b.n > ORDERED_FROM
            counts[b.key, numbered] = (high if numbered else low) + 1
            n = low + high + 1 if low >= ORDERED_FROM else counts[b.key, numbered] + (
                ORDERED_FROM if numbered else 0)  # fmt: skip
            found.append(replace(b, n=n, line=b.line + self.line - 2))  # heading: line 1
        return found


class ReadWhole(Exception):
    """A tail whose counts only the whole file's reading gets right: read it whole."""


def _restart(old: str, bullets: list[Bullet]) -> tuple[_Frame, str]:
    """The whole text read once, then the frame from its last bullet that opens a line with
    `-`, `*` or `+` at column 0, with the text from there on: such a line closed every block
    open before it but its list, so the note is read back on the tail alone.
    The whole text when no bullet is such, or a dreaming marker follows it. `bullets`: the
    whole text's."""
    lines = old.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for index in range(len(bullets) - 1, max(len(bullets) - RESTART_LOOK, 0) - 1, -1):
        bullet = bullets[index]
        if lines[bullet.line - 1][:2] not in ("- ", "* ", "+ "):
            continue
        tail = "\n".join(lines[bullet.line - 1 :])
        base = Counter((b.key, b.n > ORDERED_FROM) for b in bullets[:index])
        if DREAMING_TAG in tail:
            break
        counts = tuple((k, numbered, n) for (k, numbered), n in sorted(base.items()))
        return _Frame(bullet.key, counts, bullet.line), tail
    return _Frame(), old


RESTART_LOOK = 50  # bullets looked back through for one at column 0


def plan(view: View | None, text: str, now: datetime, shown: str) -> Planned:
    """The note added to a journal (None: a journal not there yet), read back. Pure."""
    heading, key = f"## {now:%H:%M}", f"{now:%H%M}"
    line = f"- {text}\n"
    if view is None:
        data = f"{NEW_JOURNAL}\n{heading}\n{line}"
        bullet = _read_back(_Frame(), "", [], data, text, (key,), shown)
        return Planned(data.encode(), line.encode(), bullet, "journal", "utf-8", Counter())
    mark = view.mark
    encoding, old = _decoded(view.raw, shown, mark.encoding if mark else None)
    if mark is not None:  # ReadWhole goes to the caller: it has the tail alone
        return _planned_on(_Frame(mark.key, mark.base, mark.line), old, old, text, now, shown,
                           encoding)  # fmt: skip
    whole = parse(old)  # read once: the frame, and the bullets before the note when whole
    frame, tail = _restart(old, whole)
    try:
        return _planned_on(frame, old, tail, text, now, shown, encoding,
                           whole if frame.key is None else None)  # fmt: skip
    except ReadWhole:
        return _planned_on(_Frame(), old, old, text, now, shown, encoding, whole)


def _planned_on(
    frame: _Frame,
    old: str,
    tail: str,
    text: str,
    now: datetime,
    shown: str,
    encoding: str,
    read: list[Bullet] | None = None,
) -> Planned:
    """`plan`'s work on a journal's text `old`, read back on `tail` (its end) in `frame`
    (`read`: the tail's bullets in it, when already read)."""
    heading, key = f"## {now:%H:%M}", f"{now:%H%M}"
    newline = "\r\n" if "\r\n" in old else "\n"
    line = f"- {text}{newline}"
    ending = "" if not old or old.endswith(("\n", "\r")) else newline
    before = read if read is not None else frame.bullets(tail) if tail else []  # read once
    if old.strip():
        # Under the section the journal ends in, when it is of this hour, not ahead of the clock.
        hour = tuple(f"{now:%H}{m:02d}" for m in range(now.minute + 1))
        added = f"{ending}{line}"
        try:
            bullet = _read_back(frame, tail, before, tail + added, text, hour, shown)
            return _planned(added, line, bullet, None, encoding, frame, before)
        except NoteRefused:
            pass  # another section, or a block that would take it: a section of its own
    blank = "" if not old.strip() or old.endswith(("\n\n", "\r\n\r\n")) else newline
    added = f"{ending}{blank}{heading}{newline}{line}"
    bullet = _read_back(frame, tail, before, tail + added, text, (key,), shown)
    return _planned(added, line, bullet, "section", encoding, frame, before)


def _planned(
    added: str,
    line: str,
    bullet: Bullet,
    made: str | None,
    encoding: str,
    frame: _Frame,
    tail: list[Bullet],
) -> Planned:
    before = Counter((b.key, b.n > ORDERED_FROM) for b in tail)
    for key, numbered, n in frame.base:
        before[key, numbered] += n
    return Planned(added.encode(encoding), line.encode(encoding), bullet, made, encoding, before)


def _decoded(raw: bytes, shown: str, encoding: str | None = None) -> tuple[str, str]:
    """The journal's encoding (its byte-order mark's, else UTF-8; a tail's is its mark's) and
    its exact text."""
    mark = b""
    if encoding is None:
        mark, encoding = byte_order(raw)
    try:
        return encoding, raw[len(mark) :].decode(encoding)
    except UnicodeDecodeError:
        raise NoteRefused(
            f"{shown} is not valid {encoding.upper()}: memfuse adds nothing to a file it cannot"
            " read exactly (nothing written)"
        ) from None


def _read_back(
    frame: _Frame,
    old: str,
    before: list[Bullet],
    new: str,
    text: str,
    keys: tuple[str, ...],
    shown: str,
) -> Bullet:
    """The note as the journal reader reads the new file: every old bullet (`before`, read
    from `old`) unchanged and one more, with exactly `text`, in a section keyed by one of
    `keys`; else NoteRefused."""
    after = frame.bullets(new)
    added = set(after) - set(before)
    if len(after) == len(before) + 1 and set(before) <= set(after) and len(added) == 1:
        (bullet,) = added
        if bullet.text == text and bullet.key in keys:
            return bullet
    raise NoteRefused(_why(old, shown, frame.line))


def _why(text: str, shown: str, first: int = 1) -> str:
    """Why a note at the end of this journal (its lines from `first` on) would not read back
    as itself."""
    fence, comment = "", None
    for n, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=first):
        if fence:
            fence = "" if fence_closes(line, fence) else fence
            continue
        if (opened := fence_opened(line)) is not None:
            fence, since = opened, n
            continue
        if comment is None and "<!--" in line and "-->" not in line.split("<!--")[-1]:
            comment = n
        elif comment is not None and "-->" in line:
            comment = None
    if fence:
        where = f"inside a code fence opened at line {since} and never closed"
    elif comment is not None:
        where = f"inside an HTML comment opened at line {comment} and never closed"
    else:
        where = "in a block (an HTML block, a quote) that would take the note into it"
    return (
        f"{shown} ends {where}: a note added there would not read back as a bullet of its"
        " own; close it in the journal and note again (nothing written)"
    )
