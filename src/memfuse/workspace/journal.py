"""The journal grammar (SPEC §3): Markdown text → bullets keyed by (HHMM, N). Pure.

A CommonMark parser (markdown-it-py) decides what a bullet is, so that sync reads what a
Markdown viewer shows: a bullet is an item of a top-level list (`-`, `*`, `+`, or numbered
`1.`/`1)`), not one inside a block quote or another item. Its nested items and continuation
lines, lazy ones included, belong to it. Text in a fence, an indented code block, a code span
or an HTML block is never a bullet; a real HTML comment is left out of a bullet's text (a
`<!--` inside a code span is text, not a comment). ATX headings of level 2-6 holding a time
start a section keyed by the first time in them; a level-1 heading resets the key to `0000`.
Numbered items count apart, from 1001 (ORDERED_FROM), so that positions never move.
Sections under a heading of `SKIPPED_SECTIONS` (and their subsections) hold no bullets.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

NO_TIME = "0000"
_TIME = re.compile(r"(?<![0-9])([01]?[0-9]|2[0-3]):([0-5][0-9])(?![0-9])")

# Sections that are not the agent's memories: OpenClaw's dreaming writes these managed blocks
# into the day's journal (memory-core's dreaming-markdown in the `openclaw` package 2026.9.6:
# `## Light Sleep` and `## REM Sleep`, each between `<!-- openclaw:dreaming:… -->` markers;
# `## Deep Sleep` is its DREAMS.md summary). They restate the journal; synced, they would come
# back as new memories every night. Compared without case or surrounding space.
SKIPPED_SECTIONS = frozenset({"light sleep", "rem sleep", "deep sleep"})


def skipped_section(heading_text: str) -> bool:
    return " ".join(heading_text.split()).casefold() in SKIPPED_SECTIONS


@dataclass(frozen=True)
class Bullet:
    key: str  # HHMM of its section, "0000" when none
    n: int  # 1-based count of bullets with this key, in file order
    text: str
    line: int  # 1-based line where the bullet starts

    @property
    def position(self) -> str:
        return f"{self.key}-{self.n}"


@dataclass(frozen=True)
class ParsedJournal:
    bullets: tuple[Bullet, ...]
    replaced_bytes: bool  # the file was not valid UTF-8; bad bytes became U+FFFD


# Byte-order marks and the encodings they announce, longest first (UTF-32's little-endian
# mark begins with UTF-16's). Editors on Windows save "Unicode" as UTF-16 with a mark.
_MARKS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)


def decode(raw: bytes) -> tuple[str, bool]:
    """Bytes → text: UTF-8, or UTF-16/UTF-32 announced by a byte-order mark (the mark
    dropped); invalid bytes replaced (and reported); newlines unified."""
    encoding = "utf-8"
    for mark, named in _MARKS:
        if raw.startswith(mark):
            raw, encoding = raw[len(mark) :], named
            break
    try:
        text, replaced = raw.decode(encoding), False
    except UnicodeDecodeError:
        text, replaced = raw.decode(encoding, errors="replace"), True
    return text.replace("\r\n", "\n").replace("\r", "\n"), replaced


def section_key(heading_text: str) -> str:
    """`14:00 memory-sync` → `1400`; `Morning (9:00-12:00)` → `0900`; no time → `0000`."""
    match = _TIME.search(heading_text)
    return f"{int(match[1]):02d}{match[2]}" if match else NO_TIME


# A numbered item is a bullet too, counted apart from `-`/`*`/`+` items from ORDERED_FROM + 1
# in its section: journals synced before numbered items were read keep every position.
ORDERED_FROM = 1000

# CommonMark's block structure alone (the inline pass runs only where an item may hold an
# HTML comment): what a Markdown viewer shows as a list item is what sync reads as a bullet.
NESTING = 400  # token levels CommonMark may open: well inside Python's stack


@functools.cache
def _markdown_it() -> tuple[MarkdownIt, MarkdownIt]:
    """The block parser and the inline one, made when a journal first needs them: importing
    markdown-it costs a run ~40 ms, and a run whose journals are all plain never does."""
    from markdown_it import MarkdownIt

    blocks = MarkdownIt("commonmark", {"maxNesting": NESTING}).disable(["inline", "text_join"])
    return blocks, MarkdownIt("commonmark")


_MARKER = re.compile(r"^[ \t]*(?:[-*+]|[0-9]{1,9}[.)])")
# What opens blocks inside blocks at the start of a line: indentation, quote marks, list
# markers. A line opening more than DEEPEST columns of them is a hostile file's: parsed whole,
# it would cost CommonMark a pass over the rest of the file for every level it opens.
_NESTERS = re.compile(r"(?:[ \t>]|[-*+](?=[ \t])|[0-9]{1,9}[.)](?=[ \t]))*")
DEEPEST = 120
_START = re.compile(r"^(#{1,6}(?:[ \t]|$)|[-*+](?:[ \t]|$)|[0-9]{1,9}[.)](?:[ \t]|$))")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def parse(text: str) -> list[Bullet]:
    """Every non-empty top-level list item of a journal, in file order. Never raises.

    A top-level item is one of a list that is not inside another block (a list item or a
    block quote); its text is its lines — nested items and continuation lines included —
    each stripped, blank ones and real HTML comments left out. A plain journal is read line
    by line (`parse_plain`), any other by markdown-it (`parse_commonmark`): the same bullets.
    """
    plain = parse_plain(text)
    return plain if plain is not None else parse_commonmark(text)


def parse_commonmark(text: str) -> list[Bullet]:
    """`parse` by markdown-it's blocks, whatever the journal holds."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # lines as CommonMark counts them
    lines = text.split("\n")
    walk = _Walk(lines)
    tokens = commonmark_blocks(lines)
    if tokens is not None:
        walk.take(tokens, 0)
        return walk.bullets
    # Nested too deep (a hostile file): CommonMark would give the rest of the file to the deep
    # item. Each top-level block is read alone instead, so a bullet after it stays one; a block
    # too deep itself is one bullet, its lines as they are.
    for first, last in _chunks(lines):
        tokens = commonmark_blocks(lines[first:last])
        if tokens is not None:
            walk.take(tokens, first)
        elif _MARKER.match(lines[first]):
            walk.add([first, last], [], ordered=lines[first].lstrip()[:1].isdigit())
    return walk.bullets


# The plain reading (docs/decisions.md 170). Most journals are ATX headings, `-`/`*`/`+` items
# and their text: for those, CommonMark's blocks follow from each line's indentation and first
# characters, read here line by line at a small part of markdown-it's cost. A journal holding
# anything that could open another block — a tab or control character, any `<` (HTML, a
# comment), and at the start of a line's text a fence, a quote, a reference definition, a
# thematic break or setext underline, a numbered item, an indented heading, a list marker where
# it could start an item of its own — is read by markdown-it instead (`parse`), as is one
# whose structure this reading does not follow (a marker indented one space, text indented for
# code after a blank line, a nested marker that closes items and lands as indented code).
# tests/unit/test_journal_plain.py holds both readings equal.
_NOT_PLAIN = re.compile(r"[\x00-\x09\x0b-\x1f\x7f<]")
_OPENS = re.compile(
    r"[#>\[]|```|~~~|[-*+](?: |$)|[0-9]{1,9}[.)](?: |$)|([-*_])(?: *\1){2,} *$|=+ *$|-+ *$"
)
_HEADING = re.compile(r"(#{1,6}) ")
PLAIN_INDENT = 40  # spaces; deeper is left to markdown-it (and its depth guard)


def _plain(lines: list[str]) -> list[tuple[int, int, str]] | None:
    """The headings and top-level items of a plain journal, in file order — (level, 0, title)
    and (first line, end line, "") — or None when it is not plain (see above).

    What keeps this CommonMark's reading: every item opens with `- ` at column 0 (or `*`, `+`)
    and text, so its content starts at column 2 and its first block is a paragraph; a line of
    text at column 0 or 1 continues that paragraph lazily unless a blank line came first; a
    line indented 2 or more belongs to the item (a nested item, or text), and no line after a
    blank one is indented for code (6 or more), nor a nested marker that closes items (`_nest`),
    so the item's last block is always a paragraph. Outside an item, text is a paragraph or
    indented code, neither of which holds an item.
    """
    found: list[tuple[int, int, str]] = []
    item: list[int] | None = None  # [first, end) of the open top-level item
    columns = [2]  # where the content of the open item and its open nested items starts
    blank = False  # the line before was blank
    for n, line in enumerate(lines):
        body = line.lstrip(" ")
        if not body:
            blank = True
            continue
        indent = len(line) - len(body)
        if indent > PLAIN_INDENT:
            return None
        if not indent and (head := _HEADING.match(line)):
            title = line[head.end() :].strip()
            if not title or title.endswith("#"):
                return None  # an empty heading, or a closing sequence: markdown-it's to read
            if item:
                found.append((item[0], item[1], ""))
            item = None
            found.append((len(head[1]), 0, title))
        elif body[0] in "-*+" and body[1:2] == " ":
            text = body[2:]
            if not text[:1].strip() or _OPENS.match(text):
                return None
            if not indent:
                if item:
                    found.append((item[0], item[1], ""))
                item, columns = [n, n + 1], [2]
            elif item and indent >= 2 and not (blank and indent >= 6):
                if not _nest(columns, indent, blank=blank):
                    return None
                item[1] = n + 1  # a nested item, or text of the paragraph
            else:
                return None
        elif _OPENS.match(body):
            return None
        elif item and indent >= 2:
            if blank:
                if indent >= 6:
                    return None
                while columns[-1] > indent:  # a new paragraph, in the items it is inside
                    columns.pop()
            item[1] = n + 1
        elif item and not blank:
            item[1] = n + 1  # a lazy continuation line
        elif item:
            found.append((item[0], item[1], ""))
            item = None
        blank = False
    if item:
        found.append((item[0], item[1], ""))
    return found


def _nest(columns: list[int], indent: int, *, blank: bool) -> bool:
    """A `- ` line indented 2 or more inside an open item, read as markdown-it reads it:
    `columns` (the content columns of the open item and its open nested items, outermost
    first) updated; False when the line is indented code, which a later line at column 0
    would not continue.

    After a line of text, the marker is more of its paragraph when indented 4 or more past the
    innermost item's content, or 4 or more past its parent's and left of its own (markdown-it's
    special case). Otherwise it ends the paragraph and closes every item it is left of; in the
    innermost one left open it is a new item, or indented code when 4 or more past its content
    (`- a` / `     - b` / `       - c` / `      - d`: `- d` is code in `a`, not an item of
    `b`'s list, and a line at column 0 after it is a paragraph of its own, outside `a`).
    """
    if not blank:
        inner, outer = columns[-1], columns[-2] if len(columns) > 1 else 0
        if indent - inner >= 4 or (indent - outer >= 4 and indent < inner):
            return True
    while columns[-1] > indent:
        columns.pop()
    if indent - columns[-1] >= 4:
        return False
    columns.append(indent + 2)
    return True


def parse_plain(text: str) -> list[Bullet] | None:
    """`parse` of a plain journal, line by line; None when it is not plain (see above)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _NOT_PLAIN.search(text):
        return None
    lines = text.split("\n")
    found = _plain(lines)
    if found is None:
        return None
    walk = _Walk(lines)
    walk.replay(found)
    return walk.bullets


def commonmark_blocks(lines: list[str]) -> list[Token] | None:
    """CommonMark's blocks of these lines; None when they nest too deep to parse whole (also
    the weekly roll-ups' parse, memfuse.workspace.sections)."""
    if any(_NESTERS.match(line).end() > DEEPEST for line in lines):  # type: ignore[union-attr]
        return None
    try:
        tokens = _markdown_it()[0].parse("\n".join(lines))
    except RecursionError:  # a safety net: DEEPEST keeps far from it
        return None
    return None if any(t.level >= NESTING - 2 for t in tokens) else tokens


def _chunks(lines: list[str]) -> list[tuple[int, int]]:
    """The file cut around every unindented heading and before every unindented list marker,
    outside fences."""
    starts, fence = [0], ""
    for n, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened[1][0] == fence[0] and len(opened[1]) >= len(fence):
                fence = ""
        elif opened:
            fence = opened[1]
        elif n and _START.match(line):
            starts.append(n)
        if not fence and line.startswith("#") and n + 1 < len(lines):
            starts.append(n + 1)  # a heading is a block of its own
    starts = sorted(set(starts))
    return list(zip(starts, [*starts[1:], len(lines)], strict=True))


class Places:
    """The positions a day's bullets have taken, each once. A section of over 1000 `-` items
    meets the numbered items' counts: the later of two such bullets takes the section's next
    count above every one taken (one step, however hostile the file)."""

    def __init__(self) -> None:
        self.used: set[tuple[str, int]] = set()
        self.top: dict[str, int] = {}

    def take(self, key: str, n: int) -> int:
        if (key, n) in self.used:
            n = self.top[key] + 1
        self.used.add((key, n))
        self.top[key] = max(self.top.get(key, 0), n)
        return n


class _Walk:
    """The bullets of a file, built from its tokens (of the whole, or chunk by chunk)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.key = NO_TIME
        self.skip_level = 0  # the level of the skipped section we are in, 0 when none
        self.counts: Counter[tuple[str, bool]] = Counter()
        self.places = Places()
        self.bullets: list[Bullet] = []

    def take(self, tokens: list[Token], offset: int) -> None:
        for n, token in enumerate(tokens):
            if token.level != 0 and token.type != "list_item_open":
                continue
            if token.type == "heading_open" and token.markup.startswith("#"):  # ATX (SPEC)
                self.heading(tokens[n + 1].content, len(token.markup))
            elif token.type == "list_item_open" and token.level == 1 and token.map:
                ordered = token.info != "" or token.markup in (".", ")")
                span = [token.map[0] + offset, token.map[1] + offset]
                self.add(span, _comments_in(tokens, n), ordered=ordered)

    def heading(self, title: str, level: int) -> None:
        self.key = section_key(title) if level > 1 else NO_TIME
        if not (self.skip_level and level > self.skip_level):
            self.skip_level = level if skipped_section(title) else 0

    def replay(self, found: list[tuple[int, int, str]]) -> None:
        """What `_plain` read: headings (level, 0, title) and items (first, end, "")."""
        for a, b, title in found:
            if title:
                self.heading(title, a)
            else:
                self.add([a, b], [], ordered=False)

    def add(self, span: list[int], comments: list[str], *, ordered: bool) -> None:
        if self.skip_level:
            return
        body = _item_text(self.lines, span, comments)
        if not body:
            return
        self.counts[self.key, ordered] += 1
        count = self.counts[self.key, ordered] + (ORDERED_FROM if ordered else 0)
        count = self.places.take(self.key, count)
        self.bullets.append(Bullet(self.key, count, body, span[0] + 1))


def _comments_in(tokens: list[Token], start: int) -> list[str]:
    """The HTML comments CommonMark finds in the list item opening at `tokens[start]`: its
    comment blocks and, when its text may hold one, the comments inline in its paragraphs."""
    found: list[str] = []
    depth = 0
    for index in range(start, len(tokens)):  # not a slice: a copy per item is quadratic
        token = tokens[index]
        depth += token.nesting
        if token.type == "html_block" and token.content.lstrip().startswith("<!--"):
            found.append(token.content.strip())
        elif token.type == "inline" and "<!--" in token.content:
            for child in _markdown_it()[1].parseInline(token.content)[0].children or ():
                if child.type == "html_inline" and child.content.startswith("<!--"):
                    found.append(child.content)
        if depth <= 0:
            break
    return found


def _item_text(lines: list[str], span: list[int], comments: list[str]) -> str:
    """An item's lines, its marker dropped, each stripped, without its comments and blanks."""
    first, end = span
    own = [_MARKER.sub("", lines[first], count=1), *lines[first + 1 : end]]
    text = "\n".join(line.strip() for line in own if line.strip())
    for comment in comments:
        squeezed = "\n".join(line.strip() for line in comment.split("\n"))
        text = text.replace(squeezed, "", 1) if squeezed in text else text.replace(comment, "", 1)
    return "\n".join(line.strip() for line in text.split("\n") if line.strip())


def parse_bytes(raw: bytes) -> ParsedJournal:
    text, replaced = decode(raw)
    return ParsedJournal(tuple(parse(text)), replaced)
