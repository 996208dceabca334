"""One bullet appended to today's journal (`memfuse serve`'s `note` tool): the agent writes its
memory through memfuse, and the Markdown stays the truth (docs/security.md, "The note tool").

- The text is one bullet or nothing: a heading, fence or comment opener, a list marker or a
  quote at its start, a comment anywhere, a control character, a line break or more than
  NOTE_MAX characters is refused (`NoteRefused`, saying what to change); surrounding
  whitespace is trimmed, as the journal reader trims it.
- It goes under the section the journal ends in when that is a timed section of the current
  hour (not one ahead of the clock), else under a new `## HH:MM` at the end; a journal that
  is not there is made as the examples' are (`# Journal`, the section, the bullet).
- Before anything is written, the new file is read back by the journal reader
  (memfuse.workspace.journal): every bullet it held is still there, unchanged, and the note
  is one more, with exactly its text, in the section meant. A journal that ends inside an
  open code fence or HTML comment or block would swallow it: refused, nothing written.
- The file's bytes are kept as they are; the note is added in its encoding (UTF-8, or UTF-16/
  UTF-32 announced by a byte-order mark) and its line ending (CRLF when its lines end so).
- Written atomically through the confined writer (memfuse.confine: the real path inside the
  workspace, a hard-linked journal refused by the read, a link out refused by the write),
  after checking, just before the rename, that the file is still what was read; if another
  writer changed it meanwhile, it is read again and the note re-planned (NOTE_TRIES times).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memfuse.confine import FileChanged, UnsafePath
from memfuse.errors import MemfuseError
from memfuse.workspace.journal import Bullet, decode, parse
from memfuse.workspace.layout import Workspace
from memfuse.workspace.position import JournalPosition

NOTE_MAX = 2000  # characters of one note (a bullet is a line; a page belongs in a file)
NOTE_TRIES = 5  # reads of a journal another writer keeps changing before the note gives up
NEW_JOURNAL = "# Journal\n"  # as the examples' journals open (examples/workspace/memory/)

_BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)
# What may not open a note: it would be a heading, a fence, a quote, a nested list, a table
# row read as text, or an HTML block, not the text of one bullet.
_OPENERS = (
    (re.compile(r"#{1,6}(?:\s|$)"), "a heading marker (#)"),
    (re.compile(r"(?:`{3,}|~{3,})"), "a code fence opener (``` or ~~~)"),
    (re.compile(r"(?:[-*+]|[0-9]{1,9}[.)])(?:\s|$)"), "a list marker (-, *, +, 1.)"),
    (re.compile(r">"), "a block quote marker (>)"),
    (re.compile(r"<"), "an HTML tag or comment (<)"),
    (re.compile(r"(?:[-*_=]\s*){3,}$"), "a rule or heading underline (---, ===)"),
)


class NoteRefused(MemfuseError):
    """A note memfuse will not write: the text, or the journal, says why (nothing written)."""


class _Changed(Exception):
    """The journal changed between its read and the rename: read it again."""


@dataclass(frozen=True)
class Noted:
    """Where a note was written: its file, line and position (its URI once synced)."""

    path: Path
    bullet: Bullet
    position: JournalPosition
    made: str | None  # "journal" or "section" when the note made it, else None


# Characters that make text display otherwise than it is stored: the bidirectional controls
# and the invisible spaces (a zero-width joiner stays: emoji sequences are made with it).
_DISGUISE = frozenset("\u061c\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060"
                      "\u2066\u2067\u2068\u2069\ufeff")  # fmt: skip
# `[name]: target` alone is a link reference definition, not a paragraph (CommonMark 4.7).
_LINK_DEFINITION = re.compile(r"\[[^\]]+\]:")


def checked_text(text: str) -> str:
    """The note's text as it will read back (trimmed), or NoteRefused saying what to change."""
    value = text.strip()
    if not value:
        raise NoteRefused("text must hold some words")
    if len(value) > NOTE_MAX:
        raise NoteRefused(f"text is {len(value)} characters, above the {NOTE_MAX} of one note")
    for char in value:
        if char in _DISGUISE:  # bidi overrides and zero-width spaces: text in disguise
            raise NoteRefused(
                f"text holds an invisible format character (U+{ord(char):04X}), which makes it"
                " read otherwise than it is stored"
            )
        if unicodedata.category(char) in ("Cc", "Zl", "Zp", "Cs"):
            what = (
                "a line break" if char in "\n\r\x0b\x0c\x85\u2028\u2029" else "a control character"
            )
            raise NoteRefused(
                f"text holds {what} (U+{ord(char):04X}): a note is one line, one bullet"
            )
    for pattern, what in _OPENERS:
        if pattern.match(value):
            raise NoteRefused(f"text opens with {what}: a note is the text of one bullet")
    if _LINK_DEFINITION.match(value):
        raise NoteRefused(
            "text is a link reference definition ([name]: target): a viewer shows nothing of it"
            " and turns [name] in other bullets into a link"
        )
    if "<!--" in value or "-->" in value:
        raise NoteRefused("text holds an HTML comment marker (<!-- or -->), which hides text")
    alone = parse(f"- {value}\n")
    if [b.text for b in alone] != [value]:  # whatever else Markdown makes of it
        raise NoteRefused("text would not read back as written as one bullet: write it plainly")
    return value


def append_note(workspace: Workspace, text: str, now: datetime) -> Noted:
    """Append `text` as one bullet to `now`'s journal; NoteRefused when it may not be."""
    value = checked_text(text)
    path = workspace.journal_path(now.date())
    shown = workspace.location(path)
    for _ in range(NOTE_TRIES):
        raw = _read(workspace, path, shown)
        data, bullet, made = plan(raw, value, now, shown)
        cap = workspace.files.read_cap
        if len(data) > cap:  # sync would skip it (and raise the alarm) from then on
            raise NoteRefused(
                f"{shown} would pass the {cap / 1048576:g} MiB read limit with the note;"
                " nothing written"
            )
        same = functools.partial(_same, workspace, path, raw)
        try:
            if raw is not None and data.startswith(raw):
                # Appended in place, never rewritten: a writer appending at the same moment
                # (the agent's own routine) keeps its text (the hostile review lost 9 of 3000).
                workspace.files.append_exact(path, raw, data[len(raw) :])
            else:
                workspace.files.write(path, data, create_parents=True, before_replace=same)
        except (_Changed, FileChanged):
            continue
        except UnsafePath as exc:
            raise NoteRefused(f"{exc}; nothing written") from None
        except OSError as exc:
            raise NoteRefused(f"cannot write {shown}: {exc.strerror or exc}") from None
        position = JournalPosition(now.date(), bullet.key, bullet.n)
        return Noted(path, bullet, position, made)
    raise NoteRefused(f"{shown} kept changing while the note was written ({NOTE_TRIES} tries)")


def _read(workspace: Workspace, path: Path, shown: str) -> bytes | None:
    try:
        return workspace.files.read(path)
    except FileNotFoundError:
        return None
    except UnsafePath as exc:
        raise NoteRefused(f"{exc}; nothing written") from None
    except OSError as exc:
        raise NoteRefused(f"cannot read {shown}: {exc.strerror or exc}") from None


def _same(workspace: Workspace, path: Path, raw: bytes | None) -> None:
    """Raise _Changed unless the journal is still what the note was planned on."""
    try:
        now = workspace.files.read(path)
    except FileNotFoundError:
        now = None
    except (UnsafePath, OSError):
        raise _Changed from None
    if now != raw:
        raise _Changed


def plan(
    raw: bytes | None, text: str, now: datetime, shown: str
) -> tuple[bytes, Bullet, str | None]:
    """The journal's new bytes with the note added, the note as the reader reads it there,
    and what the note made ("journal", "section" or None). Pure."""
    heading, key = f"## {now:%H:%M}", f"{now:%H%M}"
    if raw is None:
        data = f"{NEW_JOURNAL}\n{heading}\n- {text}\n".encode()
        return data, _read_back(b"", data, text, (key,), shown), "journal"
    encoding, old = _decoded(raw, shown)
    newline = "\r\n" if "\r\n" in old else "\n"
    ending = "" if not old or old.endswith(("\n", "\r")) else newline
    if old.strip():
        # Under the section the journal ends in, when it is of this hour, not ahead of the clock.
        hour = tuple(f"{now:%H}{m:02d}" for m in range(now.minute + 1))
        data = raw + f"{ending}- {text}{newline}".encode(encoding)
        try:
            return data, _read_back(raw, data, text, hour, shown), None
        except NoteRefused:
            pass  # another section, or a block that would take it: a section of its own
    blank = "" if not old.strip() or old.endswith(("\n\n", "\r\n\r\n")) else newline
    data = raw + f"{ending}{blank}{heading}{newline}- {text}{newline}".encode(encoding)
    return data, _read_back(raw, data, text, (key,), shown), "section"


def _decoded(raw: bytes, shown: str) -> tuple[str, str]:
    """The journal's encoding (its byte-order mark's, else UTF-8) and its exact text."""
    mark, encoding = next(((m, e) for m, e in _BOMS if raw.startswith(m)), (b"", "utf-8"))
    try:
        return encoding, raw[len(mark) :].decode(encoding)
    except UnicodeDecodeError:
        raise NoteRefused(
            f"{shown} is not valid {encoding.upper()}: memfuse adds nothing to a file it cannot"
            " read exactly (nothing written)"
        ) from None


def _read_back(old: bytes, new: bytes, text: str, keys: tuple[str, ...], shown: str) -> Bullet:
    """The note as the journal reader reads the new file: every old bullet unchanged and one
    more, with exactly `text`, in a section keyed by one of `keys`; else NoteRefused."""
    before = parse(decode(old)[0]) if old else []
    after = parse(decode(new)[0])
    added = set(after) - set(before)
    if len(after) == len(before) + 1 and set(before) <= set(after) and len(added) == 1:
        (bullet,) = added
        if bullet.text == text and bullet.key in keys:
            return bullet
    raise NoteRefused(_why(decode(old)[0], shown))


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _why(text: str, shown: str) -> str:
    """Why a note at the end of this journal would not read back as itself."""
    fence, comment = "", None
    for n, line in enumerate(text.split("\n"), start=1):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened[1][0] == fence[0] and len(opened[1]) >= len(fence):
                fence = ""
            continue
        if opened:
            fence, since = opened[1], n
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
