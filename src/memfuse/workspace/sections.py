"""A weekly roll-up's `## YYYY-MM-DD` sections, found as CommonMark finds headings. Pure.

A day's heading splits the roll-up only where a Markdown viewer shows a heading: a top-level
ATX `## YYYY-MM-DD` line, never one inside a fenced code block, an HTML block or a list item.
`closed` makes a daily's text safe to append before another day's heading.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import date

from memfuse.workspace.blocks import token_chunks
from memfuse.workspace.comments import fence_closes, fence_opened
from memfuse.workspace.journal import ParsedJournal, parse, read

DAY_HEADING = re.compile(r"## ([0-9]{4})-([0-9]{2})-([0-9]{2})[ \t]*")
_PROBE = "## 1900-01-01"  # a heading appended to see whether a text swallows it
# An HTML block's opening and the line that ends it (CommonMark's kinds 1-5; 6 and 7 end at a
# blank line, which every appended section starts with).
_HTML_ENDS = (
    (re.compile(r" {0,3}<(pre|script|style|textarea)(?:[ \t>]|$)", re.IGNORECASE), None),
    (re.compile(r" {0,3}<!--"), "-->"),
    (re.compile(r" {0,3}<\?"), "?>"),
    (re.compile(r" {0,3}<![A-Za-z]"), ">"),
    (re.compile(r" {0,3}<!\[CDATA\["), "]]>"),
)

Sections = dict[date, list[ParsedJournal]]


def heading_lines(lines: list[str]) -> list[int]:
    """The lines (0-based) of the ATX headings outside every container, in order, as the
    journals' reading finds them (`token_chunks`)."""
    return [
        first + t.map[0]
        for first, _end, tokens in token_chunks(lines)
        for t in tokens or ()
        if t.type == "heading_open" and t.level == 0 and t.markup.startswith("#") and t.map
    ]


def split(text: str, day_of: Callable[[str], date | None]) -> tuple[Sections, list[str]]:
    """Each day's `## YYYY-MM-DD` sections of a roll-up's text in file order, each parsed as
    that day's journal (its lines the roll-up's own); and the headings that name no day."""
    lines = text.split("\n")
    heads = [n for n in heading_lines(lines) if DAY_HEADING.fullmatch(lines[n])]
    found: Sections = {}
    odd: list[str] = []
    for index, n in enumerate(heads):
        day = day_of(lines[n][3:].strip())
        if day is None:
            odd.append(lines[n].strip())
            continue
        end = heads[index + 1] if index + 1 < len(heads) else len(lines)
        chunk = "\n".join(["", *lines[n + 1 : end]])  # line 1 is the heading's
        read_bullets, tally = read(chunk)
        bullets = tuple(replace(b, line=b.line + n) for b in read_bullets)
        if tally.first_other:
            tally = replace(tally, first_other=tally.first_other + n)
        found.setdefault(day, []).append(ParsedJournal(bullets, False, tally))
    return found, odd


def swallows(text: str) -> bool:
    """Whether a heading written after this text would not be one (a block left open)."""
    lines = [*text.split("\n"), "", _PROBE]
    return len(lines) - 1 not in heading_lines(lines)


def closed(text: str) -> str:
    """The text with the fence or HTML block it leaves open at its end closed, so that what
    is appended after it stays outside it; the text itself when nothing is open, when it
    cannot be closed, or when closing would change one of its bullets."""
    if not swallows(text):
        return text
    lines = text.split("\n")
    closer = _closer(lines)
    if closer is None:
        return text
    candidate = f"{text}\n{closer}"
    if swallows(candidate) or [b.text for b in parse(candidate)] != [b.text for b in parse(text)]:
        return text
    return candidate


def _closer(lines: list[str]) -> str | None:
    """The line that ends the block open at the end of these lines: the last top-level one (of
    the last block `token_chunks` parses, when the whole is too deep to parse)."""
    *_, (at, _end, tokens) = token_chunks(lines)
    if tokens is None:  # too deep to parse: the line scan's fence, if one is open
        fence = ""
        for line in lines:
            if fence:
                fence = "" if fence_closes(line, fence) else fence
            elif (opened := fence_opened(line)) is not None:
                fence = opened
        return fence or None
    last = next((t for t in reversed(tokens) if t.level == 0 and t.map), None)
    if last is None or last.map is None:
        return None
    if last.type == "fence":
        return last.markup
    if last.type == "html_block":
        first = lines[at + last.map[0]]
        for opening, end in _HTML_ENDS:
            match = opening.match(first)
            if match is not None:
                return end if end is not None else f"</{match[1].lower()}>"
    return None
