"""The plain reading of a journal, line by line. Pure.

Most journals are ATX headings, `-`/`*`/`+` items and their text: for those, CommonMark's
blocks follow from each line's indentation and first characters, read here line by line at a
small part of markdown-it's cost. A journal holding anything that could open another block or
change a bullet's text — a tab or control character, an HTML comment (`<!--`) anywhere, and at
the start of a line's text (or an item's) a `<` (an HTML block), a fence, a quote, a reference
definition, a thematic break or setext underline, a numbered item, an indented heading, a list
marker where it could start an item of its own — is read by markdown-it instead
(memfuse.workspace.blocks), as is one whose structure this reading does not follow (a marker
indented one space, text indented for code after a blank line, a nested marker that closes
items and lands as indented code). tests/unit/test_journal_plain.py holds both readings equal:
bullets, positions, lines and tallies.
"""

from __future__ import annotations

import re

from memfuse.workspace.bullets import Builder, item_text

_NOT_PLAIN = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]|<!--")
_OPENS = re.compile(
    r"[#>\[<]|```|~~~|[-*+](?: |$)|[0-9]{1,9}[.)](?: |$)|([-*_])(?: *\1){2,} *$|=+ *$|-+ *$"
)
_HEADING = re.compile(r"(#{1,6}) ")
PLAIN_INDENT = 40  # spaces; deeper is left to markdown-it


def read_plain(text: str) -> Builder | None:
    """The bullets and tally of a plain journal (its newlines unified), line by line; None
    when it is not plain (see above)."""
    if _NOT_PLAIN.search(text):
        return None
    build = Builder()
    return build if _plain(text.split("\n"), build) else None


def _plain(lines: list[str], build: Builder) -> bool:
    """Give `build` the headings and top-level items of a plain journal, in file order, and
    count its other lines; False when it is not plain (see above; `build` is then spoilt).

    What keeps this CommonMark's reading: every item opens with `- ` at column 0 (or `*`, `+`)
    and text, so its content starts at column 2 and its first block is a paragraph; a line of
    text at column 0 or 1 continues that paragraph lazily unless a blank line came first; a
    line indented 2 or more belongs to the item (a nested item, or text), and no line after a
    blank one is indented for code (6 or more), nor a nested marker that closes items (`_nest`),
    so the item's last block is always a paragraph. Outside an item, text is a paragraph (other
    text) or, indented 4 or more where no paragraph is open, indented code.
    """
    item: list[int] | None = None  # [first, end) of the open top-level item
    columns = [2]  # where the content of the open item and its open nested items starts
    blank = False  # the line before was blank
    prose = False  # a paragraph outside every item is open

    for n, line in enumerate(lines):
        body = line.lstrip(" ")
        if not body:
            blank, prose = True, False
            continue
        indent = len(line) - len(body)
        if indent > PLAIN_INDENT:
            return False
        if not indent and (head := _HEADING.match(line)):
            title = line[head.end() :].strip()
            if not title or title.endswith("#"):
                return False  # an empty heading, or a closing sequence: markdown-it's to read
            _close(build, lines, item)
            item, prose = None, False
            build.heading(title, len(head[1]), n)
        elif body[0] in "-*+" and body[1:2] == " ":
            rest = body[2:]
            if not rest[:1].strip() or _OPENS.match(rest):
                return False
            if not indent:
                _close(build, lines, item)
                item, columns, prose = [n, n + 1], [2], False
            elif item and indent >= 2 and not (blank and indent >= 6):
                if not _nest(columns, indent, blank=blank):
                    return False
                item[1] = n + 1  # a nested item, or text of the paragraph
            else:
                return False
        elif _OPENS.match(body):
            return False
        elif item and indent >= 2:
            if blank:
                if indent >= 6:
                    return False
                while columns[-1] > indent:  # a new paragraph, in the items it is inside
                    columns.pop()
            item[1] = n + 1
        elif item and not blank:
            item[1] = n + 1  # a lazy continuation line
        else:
            if item:
                _close(build, lines, item)
                item = None
            if indent >= 4 and not prose:
                build.took["code_lines"] += 1
            else:
                prose = True
                build.other(n)
        blank = False
    _close(build, lines, item)
    return True


def _close(build: Builder, lines: list[str], item: list[int] | None) -> None:
    """The open top-level item, if any, read: its lines from its first (`- ` and text) on."""
    if item:
        first, end = item
        build.item(first, item_text([lines[first][2:], *lines[first + 1 : end]]), ordered=False)


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
