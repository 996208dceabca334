"""The journal grammar (SPEC §3): Markdown text → bullets keyed by (HHMM, N). Pure.

A bullet is a top-level list item (`-`, `*`, `+`, indent ≤ 3). The lines that follow it and are
indented (nested items, continuation text), or that continue its paragraph without a blank line
(Markdown's lazy continuation), belong to it. Fenced code and HTML comments are skipped.
Headings of level 2-6 holding a time start a section keyed by the first time in them.
Sections under a heading of `SKIPPED_SECTIONS` (and their subsections) hold no bullets.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

NO_TIME = "0000"
_TIME = re.compile(r"(?<![0-9])([01]?[0-9]|2[0-3]):([0-5][0-9])(?![0-9])")
_HEADING = re.compile(r"^(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_BULLET = re.compile(r"^([-*+])([ \t]+|$)(.*)$", re.DOTALL)
_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
_THEMATIC = re.compile(r"^([-*_])(?:[ \t]*\1){2,}[ \t]*$")

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


def decode(raw: bytes) -> tuple[str, bool]:
    """Bytes → text: BOM dropped, invalid UTF-8 replaced (and reported), newlines unified."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text, replaced = raw.decode("utf-8"), False
    except UnicodeDecodeError:
        text, replaced = raw.decode("utf-8", errors="replace"), True
    return text.replace("\r\n", "\n").replace("\r", "\n"), replaced


def section_key(heading_text: str) -> str:
    """`14:00 memory-sync` → `1400`; `Morning (9:00-12:00)` → `0900`; no time → `0000`."""
    match = _TIME.search(heading_text)
    return f"{int(match[1]):02d}{match[2]}" if match else NO_TIME


def _indent(line: str) -> int:
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _strip_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """Remove HTML comments from one line; report whether a comment is still open after it."""
    kept: list[str] = []
    rest = line
    while rest:
        if in_comment:
            end = rest.find("-->")
            if end < 0:
                return "".join(kept), True
            rest, in_comment = rest[end + 3 :], False
        else:
            start = rest.find("<!--")
            if start < 0:
                kept.append(rest)
                break
            kept.append(rest[:start])
            rest, in_comment = rest[start + 4 :], True
    return "".join(kept), in_comment


class _Builder:
    def __init__(self) -> None:
        self.key = NO_TIME
        self.counts: Counter[str] = Counter()
        self.bullets: list[Bullet] = []
        self.lines: list[str] | None = None
        self.start = 0
        self.content_col = 0
        self.after_blank = False
        self.skip_level = 0  # the level of the skipped section we are in, 0 when none

    def heading(self, level: int, text: str) -> None:
        if not (self.skip_level and level > self.skip_level):
            self.skip_level = level if skipped_section(text) else 0

    def close(self) -> None:
        if self.lines is not None:
            text = "\n".join(line for line in self.lines if line).strip()
            if text and not self.skip_level:
                self.counts[self.key] += 1
                self.bullets.append(Bullet(self.key, self.counts[self.key], text, self.start))
        self.lines = None

    def open(self, first: str, line_no: int, content_col: int) -> None:
        self.close()
        self.lines = [first.strip()]
        self.start = line_no
        self.content_col = content_col
        self.after_blank = False


def parse(text: str) -> list[Bullet]:
    """Every non-empty top-level bullet of a journal, in file order. Never raises."""
    b = _Builder()
    fence: str | None = None
    in_comment = False
    for line_no, raw_line in enumerate(text.split("\n"), start=1):
        if fence is not None:
            stripped = raw_line.strip()
            if (
                _indent(raw_line) <= 3
                and stripped.startswith(fence)
                and not stripped.strip(fence[0])
            ):
                fence = None
            continue
        line, in_comment_after = _strip_comments(raw_line, in_comment)
        was_in_comment, in_comment = in_comment, in_comment_after
        if not line.strip():
            if not was_in_comment and "<!--" not in raw_line:
                b.after_blank = True
            continue
        indent = _indent(line)
        body = line.lstrip(" \t")
        if b.lines is not None and indent >= max(b.content_col, 1):
            b.lines.append(body.strip())
            continue
        if indent <= 3:
            fence_match = _FENCE.match(body)
            if fence_match and not (fence_match[1][0] == "`" and "`" in fence_match[2]):
                b.close()
                fence = fence_match[1]
                continue
            heading = _HEADING.match(body)
            if heading:
                b.close()
                level = len(heading[1])
                b.key = section_key(heading[2] or "") if level >= 2 else NO_TIME
                b.heading(level, heading[2] or "")
                continue
            if _THEMATIC.match(body):
                b.close()
                continue
            bullet = _BULLET.match(body)
            if bullet:
                spaces = len(bullet[2].expandtabs(4)) if bullet[2] else 1
                b.open(bullet[3], line_no, indent + 1 + (spaces if spaces <= 4 else 1))
                continue
        if b.lines is not None and (indent > 0 or not b.after_blank):
            b.lines.append(body.strip())  # indented text, or a lazy paragraph continuation
            continue
        b.close()
    b.close()
    return b.bullets


def parse_bytes(raw: bytes) -> ParsedJournal:
    text, replaced = decode(raw)
    return ParsedJournal(tuple(parse(text)), replaced)
