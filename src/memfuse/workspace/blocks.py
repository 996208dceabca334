"""A journal read by CommonMark's blocks (markdown-it-py): what a viewer shows as a list item is
a bullet, whatever container holds it. Pure.

A bullet is an outermost list item — one inside no other item, at the top level or in a block
quote. Its nested items and continuation lines, lazy ones included, belong to it; its text is
its lines, each stripped, without its marker, its block quotes' `>`, its HTML comments and its
blank lines. Left out, and tallied: code (fenced or indented) outside every item, the text of
HTML comments, and the host's dreaming blocks between their own markers
(memfuse.workspace.comments). A top-level ATX heading keys the section (SPEC §3).

Every step is linear in the journal's bytes: markdown-it's block pass (its inline pass never
runs: comments are found by memfuse.workspace.comments), one walk over the tokens, one scan of
each leaf block's lines. A journal nested deeper than CommonMark can parse in its length is read
block by block (`_chunks`); a block too deep itself is one bullet, its lines as they are.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import TYPE_CHECKING

from memfuse.workspace.block_parser import NESTING, block_parser
from memfuse.workspace.bullets import Builder, item_text
from memfuse.workspace.comments import comment_spans, dreaming_blocks, without

if TYPE_CHECKING:
    from markdown_it.token import Token


# What opens a block inside a block at the start of a line: a quote mark or a list marker
# (indentation alone opens nothing). A line opening more than DEEPEST of them is a hostile
# file's: parsed whole, it would cost CommonMark a pass over the rest of the file per level.
_OPENERS = re.compile(r"(?:[ \t]*(?:>|[-*+](?=[ \t]|$)|[0-9]{1,9}[.)](?=[ \t]|$)))*")
_OPENER = re.compile(r">|[-*+](?=[ \t]|$)|[0-9]{1,9}[.)](?=[ \t]|$)")
DEEPEST = 120
_MARKER = re.compile(r"^[ \t]*(?:[-*+]|[0-9]{1,9}[.)])")
_QUOTE = re.compile(r"^ {0,3}> ?")
_START = re.compile(r"^(#{1,6}(?:[ \t]|$)|[-*+](?:[ \t]|$)|[0-9]{1,9}[.)](?:[ \t]|$))")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r" {0,3}<!--")


def _openers(line: str) -> int:
    lead = _OPENERS.match(line)
    return len(_OPENER.findall(lead[0])) if lead and lead.end() > DEEPEST else 0


def _lists(line: str) -> bool:
    """Whether a line opens a list item (after any quote marks)."""
    lead = _OPENERS.match(line)
    return lead is not None and any(opener != ">" for opener in _OPENER.findall(lead[0]))


def commonmark_blocks(lines: list[str]) -> list[Token] | None:
    """CommonMark's blocks of these lines; None when they nest too deep to parse whole (also
    the weekly roll-ups' parse, memfuse.workspace.sections)."""
    if any(_openers(line) > DEEPEST for line in lines):
        return None
    try:
        tokens = block_parser().parse("\n".join(lines))
    except RecursionError:  # a safety net: DEEPEST keeps far from it
        return None
    return None if any(t.level >= NESTING - 2 for t in tokens) else tokens


def read_blocks(text: str) -> Builder:
    """The bullets and tally of any journal (its newlines unified), by CommonMark's blocks."""
    lines = text.split("\n")
    walk = _Walk(lines, dreaming_blocks(lines))
    tokens = commonmark_blocks(lines)
    if tokens is not None:
        walk.take(tokens, 0)
        return walk.build
    # Nested too deep (a hostile file): CommonMark would give the rest of the file to the deep
    # block. Each top-level block is read alone instead, so a bullet after it stays one.
    for first, last in _chunks(lines):
        tokens = commonmark_blocks(lines[first:last])
        if tokens is not None:
            walk.take(tokens, first)
        else:
            walk.deep(first, last)
    return walk.build


def _chunks(lines: list[str]) -> list[tuple[int, int]]:
    """The file cut where a block ends every container open before it, outside fences and
    comments: around an unindented heading, before an unindented list marker or an unindented
    line after a blank one, and before a line nested past DEEPEST (a block of its own)."""
    starts, fence, comment, blank = [0], "", False, False
    for n, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened[1][0] == fence[0] and len(opened[1]) >= len(fence):
                fence = ""
        elif comment:
            comment = "-->" not in line
        elif opened:
            fence = opened[1]
        elif n and (_START.match(line) or (blank and line[:1].strip()) or _openers(line) > DEEPEST):
            starts.append(n)
        if not fence and not comment and _COMMENT.match(line):
            comment = "-->" not in line[line.index("<!--") + 4 :]
        if not fence and line.startswith("#") and n + 1 < len(lines):
            starts.append(n + 1)  # a heading is a block of its own
        blank = not line.strip()
    starts = sorted(set(starts))
    return list(zip(starts, [*starts[1:], len(lines)], strict=True))


_LEAVES = {"inline": True, "html_block": False}  # leaf blocks whose text may hold a comment
_CODE = ("fence", "code_block")


class _Walk:
    """The bullets of a file, built from its tokens (of the whole, or chunk by chunk)."""

    def __init__(self, lines: list[str], dreaming: list[tuple[int, int]]) -> None:
        self.lines = lines
        self.dreaming = dreaming
        self.starts = [first for first, _ in dreaming]
        self.build = Builder()
        for first, end in dreaming:
            self.build.took["dreaming_blocks"] += 1
            self.build.took["dreaming_lines"] += sum(1 for s in lines[first:end] if s.strip())

    def dreamt(self, line: int) -> bool:
        """Whether a 0-based line is inside a dreaming block (markers included)."""
        at = bisect_right(self.starts, line) - 1
        return at >= 0 and line < self.dreaming[at][1]

    def take(self, tokens: list[Token], offset: int) -> None:
        quotes = 0  # block quotes open around the token
        n = 0
        while n < len(tokens):
            token = tokens[n]
            if token.type == "blockquote_open":
                quotes += 1
            elif token.type == "blockquote_close":
                quotes -= 1
            if token.map is None or self.dreamt(token.map[0] + offset):
                n += 1
                continue
            first, end = token.map[0] + offset, token.map[1] + offset
            if token.type == "list_item_open":
                n = self.item(tokens, n, offset, quotes)
                continue
            if token.type == "heading_open":
                if token.level == 0 and token.markup.startswith("#"):  # ATX only (SPEC §3)
                    self.build.heading(tokens[n + 1].content, len(token.markup))
                n += 3  # its inline and close: a heading is no other text
                continue
            if token.type in _CODE:
                self.build.took["code_lines"] += sum(1 for s in self.lines[first:end] if s.strip())
            elif token.type in _LEAVES:
                self.other(first, end, quotes, inline=_LEAVES[token.type])
            n += 1

    def other(self, first: int, end: int, quotes: int, *, inline: bool) -> None:
        """A leaf block outside every item: its comments tallied, its visible lines other."""
        shown = self.uncommented(self.unquoted(first, end, quotes), inline=inline)
        seen = [at for at, line in enumerate(shown.split("\n")) if line.strip()]
        if seen:
            self.build.other(first + seen[0], len(seen))

    def unquoted(self, first: int, end: int, quotes: int) -> str:
        """Lines without the `>` of the block quotes around them (a lazy line has fewer)."""
        own = self.lines[first:end]
        for _ in range(quotes):
            own = [_QUOTE.sub("", line, count=1) for line in own]
        return "\n".join(own)

    def uncommented(self, text: str, *, inline: bool) -> str:
        spans = comment_spans(text, inline=inline)
        self.build.took["comments"] += len(spans)
        self.build.took["comment_chars"] += sum(end - start for start, end in spans)
        return without(text, spans)

    def item(self, tokens: list[Token], start: int, offset: int, quotes: int) -> int:
        """Read the outermost item opening at `tokens[start]`; the index after its close."""
        token = tokens[start]
        assert token.map is not None
        first, end = token.map[0] + offset, token.map[1] + offset
        ordered = token.info != "" or token.markup in (".", ")")
        lines = self.unquoted(first, end, quotes).split("\n")
        lines[0] = _MARKER.sub("", lines[0], count=1)
        depth, n = 0, start
        while n < len(tokens):  # its leaf blocks: their comments out of its lines
            leaf = tokens[n]
            depth += leaf.nesting
            if leaf.type in _LEAVES and leaf.map and "<!--" in leaf.content:
                a, b = leaf.map[0] + offset - first, leaf.map[1] + offset - first
                shown = self.uncommented("\n".join(lines[a:b]), inline=_LEAVES[leaf.type])
                lines[a:b] = [shown, *[""] * (b - a - 1)]  # the item's line count kept
            n += 1
            if depth <= 0:
                break
        self.build.item(first, item_text("\n".join(lines).split("\n")), ordered=ordered)
        return n

    def deep(self, first: int, end: int) -> None:
        """A block nested too deep to parse: one bullet when a line of it opens a list item,
        its lines as they are; other text otherwise."""
        own = self.lines[first:end]
        self.build.took["deep_lines"] += sum(1 for s in own if s.strip())
        if self.dreamt(first):
            return
        text = self.uncommented("\n".join(own), inline=True)
        if any(_lists(line) for line in own):
            self.build.item(first, item_text([_MARKER.sub("", text, count=1)]), ordered=False)
        else:
            shown = [n for n, s in enumerate(text.split("\n")) if s.strip()]
            self.build.other(first + shown[0] if shown else first, len(shown))
