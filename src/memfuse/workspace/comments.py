"""HTML comments in a journal's text, and the host's dreaming blocks between their markers. Pure.

Both are found in one pass, whatever the number of comments. A comment is CommonMark
0.31.2's: `<!-->`, `<!--->`, or `<!--` up to the first `-->`. In a paragraph (`inline`) a
code span or a backslash escape that starts first makes `<!--` text, and a `<!--` never closed
is text; in an HTML block an unclosed one runs to the block's end, as a browser shows it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict

from memfuse.host import DREAMING_MARKER, DREAMING_TAG

_INLINE = re.compile(r"<!--|`+|\\[!-/:-@\[-`{-~]")
_RUNS = re.compile(r"`+")


def comment_spans(text: str, *, inline: bool) -> list[tuple[int, int]]:
    """The [start, end) offsets of every comment in one leaf block's text, in order."""
    if "<!--" not in text:
        return []
    spans: list[tuple[int, int]] = []
    if not inline:  # in an HTML block every `<!--` opens a comment
        at = 0
        while (start := text.find("<!--", at)) >= 0:
            end = _comment_end(text, start, closers=True)
            at = len(text) if end < 0 else end
            spans.append((start, at))
        return spans
    runs: dict[int, list[int]] = defaultdict(list)  # backtick runs by length: their starts
    for run in _RUNS.finditer(text):
        runs[len(run[0])].append(run.start())
    closers = True  # a `-->` may still come
    at = 0
    while (found := _INLINE.search(text, at)) is not None:
        start, token = found.start(), found[0]
        if token[0] == "\\":
            at = found.end()
        elif token[0] == "`":
            length = len(token)
            starts = runs[length]
            later = bisect_right(starts, start)
            at = starts[later] + length if later < len(starts) else found.end()
        else:
            end = _comment_end(text, start, closers)
            if end < 0:
                closers = False  # no `-->` after this one: none after any later one either
                at = found.end()
            else:
                spans.append((start, end))
                at = end
    return spans


def _comment_end(text: str, start: int, closers: bool) -> int:
    """Where the comment opening at `start` ends; -1 when nothing closes it."""
    if text.startswith(">", start + 4):
        return start + 5
    if text.startswith("->", start + 4):
        return start + 6
    if not closers:
        return -1
    close = text.find("-->", start + 4)
    return close + 3 if close >= 0 else -1


def without(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with these spans (in order, apart) left out, in one pass."""
    if not spans:
        return text
    kept, at = [], 0
    for start, end in spans:
        kept.append(text[at:start])
        at = end
    kept.append(text[at:])
    return "".join(kept)


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


def fence_opened(line: str) -> str | None:
    """The fence a line opens (its run of ` or ~), or None."""
    match = _FENCE.fullmatch(line)
    if match is None or (match[1][0] == "`" and "`" in match[2]):
        return None  # a backtick fence's info string holds no backtick
    return match[1]


def fence_closes(line: str, fence: str) -> bool:
    """Whether a line closes `fence`: as many of its character or more, and nothing after."""
    match = _FENCE.fullmatch(line)
    return (
        match is not None
        and match[1][0] == fence[0]
        and len(match[1]) >= len(fence)
        and (not match[2].strip())
    )


def dreaming_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """The [first, end) lines of every dreaming block: from a start marker to the next end
    marker of its kind, both included, outside code fences (an unclosed one excludes nothing)."""
    if not any(DREAMING_TAG in line for line in lines):
        return []
    markers: list[tuple[int, str, str]] = []
    fence = ""
    for n, line in enumerate(lines):
        if fence:
            fence = "" if fence_closes(line, fence) else fence
        elif (opened := fence_opened(line)) is not None:
            fence = opened
        elif (marker := DREAMING_MARKER.fullmatch(line)) is not None:
            markers.append((n, marker[1], marker[2]))
    pairs: list[tuple[int, int]] = []
    unclosed: dict[str, int] = {}  # each kind's first start not yet closed
    for n, kind, edge in markers:
        if edge == "start":
            unclosed.setdefault(kind, n)
        elif kind in unclosed:
            pairs.append((unclosed.pop(kind), n + 1))
    blocks: list[tuple[int, int]] = []
    for first, end in sorted(pairs):  # blocks of two kinds that overlap are one
        if blocks and first < blocks[-1][1]:
            blocks[-1] = (blocks[-1][0], max(end, blocks[-1][1]))
        else:
            blocks.append((first, end))
    return blocks
