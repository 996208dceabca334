"""A journal read by CommonMark's blocks (markdown-it-py): what a viewer shows as a list item is
a bullet, whatever container holds it, as the journal grammar says (memfuse.workspace.journal,
SPEC §3). Pure.

Every step is linear in the journal's bytes: markdown-it's block pass (its inline pass never
runs: comments are found by memfuse.workspace.comments; a line costs it once per container it
is in, however deep: memfuse.workspace.block_parser), one walk over the tokens, one scan of
each leaf block's lines. A journal nested deeper than CommonMark can parse in its length, or
whose nesting would cost markdown-it more than BUDGET, is read block by block (`_chunks`)
while the budget lasts; a block too deep itself, or past the budget, is one bullet, its lines
as they are.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
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
# The list items and quote levels past its ordinary lines' that markdown-it may spend on a
# text (`_costs`; each ~40 µs of one core here, ~4 s in all): past them, the text is read block
# by block while they last, and a block they would not cover is read as a too-deep one is.
BUDGET = 100_000
_MARKER = re.compile(r"^[ \t]*(?:[-*+]|[0-9]{1,9}[.)])")
_QUOTE = re.compile(r"^ {0,3}> ?")
# A line opening a block inside a list item, or two block quotes: where `_costs` may count.
_NESTS = re.compile(
    r"^(?:[ \t]*>){2}|^[ \t]*(?:>[ \t]*)*(?:[-*+]|[0-9]{1,9}[.)])[ \t]+(?:>|[-*+]|[0-9]{1,9}[.)])",
    re.MULTILINE,
)
# A line opening a list item, after any quote marks.
_LISTS = re.compile(r"^(?:[ \t]*>)*[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?=[ \t]|$)", re.MULTILINE)
_ITEM = re.compile(r"((?:(?: {0,3}>)+ ?)?)( {0,3})([-*+]|[0-9]{1,9}[.)])(?=[ \t]|$)([ \t]*)")
_START = re.compile(r"^(#{1,6}(?:[ \t]|$)|[-*+](?:[ \t]|$)|[0-9]{1,9}[.)](?:[ \t]|$))")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r" {0,3}<!--")


def _openers(line: str) -> int:
    lead = _OPENERS.match(line)
    return len(_OPENER.findall(lead[0])) if lead and lead.end() > DEEPEST else 0


def _costs(lines: list[str]) -> list[int]:
    """What markdown-it's block pass spends on each line beyond what an ordinary line costs, in
    list items and quote levels, at most; more than BUDGET for a line
    that opens more than DEEPEST blocks.

    The first list item a line opens, and the quotes it goes on with by their `>` before it,
    cost what an ordinary line does. Each block its leading openers open inside that item
    costs one: an item or a quote costs markdown-it the same at any depth, and a chain of them
    on one line (`- - - a`) is two bytes each. So does each level of block quote open above
    the line beyond the first and beyond its own `>`: markdown-it's quote rule sweeps all of a
    quote's lines once per level, its lazy lines too. Open quotes end at a blank line, and at
    an unindented heading or list marker."""
    costs = [0] * len(lines)
    if not _NESTS.search("\n".join(lines)):
        return costs  # no line opens a block inside an item, nor a quote inside a quote
    quotes = 0  # the most `>` a line of the open block quote went on with
    for n, line in enumerate(lines):
        lead = _OPENERS.match(line)
        if lead is None or not lead.end():  # text, a heading or a blank line: no opener
            if quotes > 1:  # (one open quote costs nothing: nor does ending it)
                if line.strip() and not _START.match(line):
                    costs[n] = quotes - 1
                else:
                    quotes = 0
            continue
        openers = _OPENER.findall(lead[0])
        if len(openers) > DEEPEST:
            costs[n] = BUDGET + 1
            continue
        if _START.match(line):
            quotes = 0
        item = 0
        while item < len(openers) and openers[item] == ">":
            item += 1
        own = openers.count(">")
        costs[n] = max(len(openers) - item - 1, 0) + max(quotes - max(own, 1), 0)
        quotes = max(quotes, own)
    return costs


def _parsed(lines: list[str]) -> list[Token] | None:
    try:
        tokens = block_parser().parse("\n".join(lines))
    except RecursionError:  # a safety net: DEEPEST keeps far from it
        return None
    return None if any(t.level >= NESTING - 2 for t in tokens) else tokens


def read_blocks(text: str) -> Builder:
    """The bullets and tally of any journal (its newlines unified), by CommonMark's blocks."""
    lines = text.split("\n")
    walk = _Walk(lines, dreaming_blocks(lines))
    for first, end, tokens in token_chunks(lines):
        if tokens is None:
            walk.deep(first, end)
        else:
            walk.take(tokens, first)
    return walk.build


def token_chunks(
    lines: list[str], piece: int | None = None
) -> Iterator[tuple[int, int, list[Token] | None]]:
    """Yield the lines' CommonMark blocks as (first, end, tokens): the whole text in one piece
    when it parses within BUDGET, else each top-level block, its tokens' lines counted from
    `first`; tokens None for a block too deep to parse, or past what is left of the budget
    (the journals' reading, and MEMORY.md's: memfuse.workspace.memory_md).

    Nested too deep or too dear to parse whole (a hostile file), CommonMark would give the
    rest of the file to the deep block, or take minutes: each top-level block is read alone
    instead, while the budget lasts, so a bullet after it stays one."""
    costs = _costs(lines)
    if piece is not None and len(lines) > piece and sum(costs) <= BUDGET:
        yield from _pieces(lines, piece)
        return
    tokens = _parsed(lines) if sum(costs) <= BUDGET else None
    if tokens is not None:
        yield 0, len(lines), tokens
        return
    budget = BUDGET
    for first, last in _chunks(lines):
        spent = sum(costs[first:last])
        tokens = None
        if spent <= budget:
            budget -= spent
            tokens = _parsed(lines[first:last])
        yield first, last, tokens


# Lines parsed at once where a reader needs no block to span its top-level ones (MEMORY.md's
# facts, RECENT.md's sections): what is held is one piece's tokens.
PIECE = 2_000


def _pieces(lines: list[str], piece: int) -> Iterator[tuple[int, int, list[Token] | None]]:
    """Parse the lines a few thousand at a time, cut only between top-level blocks, so that
    what is held is one piece's tokens: markdown-it keeps ~300 bytes of tokens for a byte of
    a file of short items, and a 4 MiB MEMORY.md parsed whole held 1.3 GB."""
    start = 0
    for first, _last in _chunks(lines):
        if first - start >= piece:
            yield start, first, _parsed(lines[start:first])
            start = first
    yield start, len(lines), _parsed(lines[start:])


def _chunks(lines: list[str]) -> list[tuple[int, int]]:
    """The file cut where a block ends every container open before it, outside fences and
    comments: around an unindented heading; before an unindented list marker, a list item of
    the item the block began with's list (in as many quotes, indented less than 4 and left of
    its text), or an unindented line after a blank one; and before a line nested past DEEPEST
    (a block of its own)."""
    starts, fence, comment, blank = [0], "", False, False
    block: tuple[int, int] | None = None  # the quotes and text column of the item it began with
    for n, line in enumerate(lines):
        if line[:1].isalpha() and not fence and not comment:  # text: no block starts here
            if blank:
                starts.append(n)
                block = None
            blank = False
            continue
        opened = _FENCE.match(line)
        item = _item(line)
        if fence:
            if opened and opened[1][0] == fence[0] and len(opened[1]) >= len(fence):
                fence = ""
        elif comment:
            comment = "-->" not in line
        elif opened:
            fence = opened[1]
        elif not n or (
            _START.match(line)
            or (item and block and item[0] == block[0] and item[1] < block[1])
            or (blank and line[:1].strip())
            or _openers(line) > DEEPEST
        ):
            starts.append(n)
            block = (item[0], item[2]) if item else None
        if not fence and not comment and _COMMENT.match(line):
            comment = "-->" not in line[line.index("<!--") + 4 :]
        if not fence and line.startswith("#") and n + 1 < len(lines):
            starts.append(n + 1)  # a heading is a block of its own
            block = (0, 4)  # any item after it is a top-level one
        blank = not line.strip()
    starts = sorted(set(starts))
    return list(zip(starts, [*starts[1:], len(lines)], strict=True))


def _item(line: str) -> tuple[int, int, int] | None:
    """The block quotes around the list item this line opens (indented less than 4 in them),
    its indentation, and the column its text starts at past the quotes (a tab counted as one
    column: this is for hostile files); None when the line opens no item."""
    item = _ITEM.match(line)
    if item is None:
        return None
    gap = len(item[4])
    text = item.end(3) + (gap if 0 < gap <= 4 and item.end() < len(line) else 1)
    return item[1].count(">"), len(item[2]), text - item.end(1)


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
                atx = token.level == 0 and token.markup.startswith("#")  # (SPEC §3)
                self.build.heading(tokens[n + 1].content, len(token.markup) * atx, first)
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
        if seen and not inline and self.build.hiding(shown) is not None:
            self.build.hidden_block(first + seen[0])  # named as hiding, not as text shown
        elif seen:
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
        depth, n, left_open = 0, start, False
        held = [not line.strip() for line in lines]  # the lines a block of it holds
        while n < len(tokens):  # its leaf blocks: their comments out of its lines
            leaf = tokens[n]
            depth += leaf.nesting
            if leaf.map and n > start:
                a, b = leaf.map[0] + offset - first, leaf.map[1] + offset - first
                held[a:b] = [True] * len(held[a:b])
            if leaf.type in _LEAVES and leaf.map and "<!--" in leaf.content:
                a, b = leaf.map[0] + offset - first, leaf.map[1] + offset - first
                raw = "\n".join(lines[a:b])
                shown = self.uncommented(raw, inline=_LEAVES[leaf.type])
                lines[a:b] = [shown, *[""] * (b - a - 1)]  # the item's line count kept
                # one the item's end closed here: a browser reads on to the page's next `-->`
                left_open = left_open or not (_LEAVES[leaf.type] or raw.rstrip().endswith("-->"))
            n += 1
            if depth <= 0:
                break
        text = item_text("\n".join(lines).split("\n"))
        # a line no block of it holds is one a preview drops: a link reference definition
        self.build.item(first, text, ordered=ordered, hides=left_open or not all(held))
        return n

    def deep(self, first: int, end: int) -> None:
        """A block nested too deep to parse, or past the budget: one bullet when a line of it
        opens a list item, its lines as they are; other text otherwise."""
        own = self.lines[first:end]
        self.build.took["deep_lines"] += sum(1 for s in own if s.strip())
        if self.dreamt(first):
            return
        raw = "\n".join(own)
        text = self.uncommented(raw, inline=True)
        if _LISTS.search(raw):
            self.build.item(first, item_text([_MARKER.sub("", text, count=1)]), ordered=False)
        else:
            shown = [n for n, s in enumerate(text.split("\n")) if s.strip()]
            self.build.other(first + shown[0] if shown else first, len(shown))
