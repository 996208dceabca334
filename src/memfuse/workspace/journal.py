"""The journal grammar (SPEC §3): Markdown text → bullets keyed by (HHMM, N), and the tally of
what each exclusion rule took. Pure.

A bullet is a list item that a CommonMark viewer renders (`-`, `*`, `+`, or numbered `1.`/`1)`),
the outermost one where lists nest, whatever container holds it (a block quote included) and
whatever opens its line (an inline HTML comment). Its nested items and continuation lines, lazy
ones included, belong to it; its text is its lines, each stripped, without its marker, its
quote marks, the text of its HTML comments and its blank lines. The only exclusions are code
(fenced or indented), the text inside HTML comments, and the host's dreaming blocks between
their own markers; each is tallied (`Tally`), as is every other line of visible text outside a
bullet. ATX headings of level 2-6 holding a time start a section keyed by the first time in
them; a level-1 heading resets the key to `0000`. Numbered items count apart, from 1001
(ORDERED_FROM), so that positions never move.

A plain journal is read line by line (memfuse.workspace.plain), any other by markdown-it's
blocks (memfuse.workspace.blocks); tests/unit/test_journal_reader.py holds them to commonmark.js.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from memfuse.workspace.blocks import read_blocks
from memfuse.workspace.bullets import Bullet, Tally
from memfuse.workspace.plain import read_plain


@dataclass(frozen=True)
class ParsedJournal:
    bullets: tuple[Bullet, ...]
    replaced_bytes: bool  # the file was not valid UTF-8; bad bytes became U+FFFD
    tally: Tally = field(default_factory=Tally)  # what each rule of the reading took


# Byte-order marks and the encodings they announce, longest first (UTF-32's little-endian
# mark begins with UTF-16's). Editors on Windows save "Unicode" as UTF-16 with a mark.
_MARKS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)


def byte_order(raw: bytes) -> tuple[bytes, str]:
    """The byte-order mark `raw` opens with and the encoding it announces (b"", UTF-8)."""
    return next(((m, e) for m, e in _MARKS if raw.startswith(m)), (b"", "utf-8"))


def decode(raw: bytes) -> tuple[str, bool]:
    """Bytes → text: UTF-8, or UTF-16/UTF-32 announced by a byte-order mark (the mark
    dropped); invalid bytes replaced (and reported); newlines unified."""
    mark, encoding = byte_order(raw)
    raw = raw[len(mark) :]
    try:
        text, replaced = raw.decode(encoding), False
    except UnicodeDecodeError:
        text, replaced = raw.decode(encoding, errors="replace"), True
    return _lines(text), replaced


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")  # lines as CommonMark counts them


def read(text: str) -> tuple[list[Bullet], Tally]:
    """Every non-empty outermost list item of a journal, in file order, and the tally of the
    reading. Never raises."""
    text = _lines(text)
    build = read_plain(text) or read_blocks(text)
    return build.bullets, build.tally()


def parse(text: str) -> list[Bullet]:
    """`read`'s bullets."""
    return read(text)[0]


def plain_part(text: str, key: str = "") -> list[Bullet] | None:
    """The bullets of a part of a plain journal read alone, from a line that is a heading or a
    top-level item at column 0, in the section of `key` ("": none yet), as it reads in the
    whole file (memfuse.recall.tail); lines count from 1 at the part's first. None when the
    part is not plain."""
    heading = f"## {key[:2]}:{key[2:]}\n" if key else ""  # the key given back as a heading
    build = read_plain(_lines(heading + text))
    if build is None:
        return None
    return [replace(b, line=b.line - 1) for b in build.bullets] if heading else build.bullets


def parse_bytes(raw: bytes) -> ParsedJournal:
    text, replaced = decode(raw)
    bullets, tally = read(text)
    return ParsedJournal(tuple(bullets), replaced, tally)
