"""MEMORY.md read as facts (tidy's consistency check, the recall index), by the journals'
CommonMark reader (memfuse.workspace.blocks): what a viewer does not show as text is not a
fact. Pure.

A fact is a paragraph a viewer shows, wherever it sits: outside every container, in a list
item at any depth (a tight item's text is its paragraph), in a block quote. Its text is its
Markdown source without the text of its HTML comments, its lines joined by one space. An HTML
block's text is a fact once its comments and tags are out (`- <!-- src --> Alice prefers tea`
is one), but for a `<script>`, `<style>`, `<pre>` or `<textarea>` block, which a viewer does
not show as text. Not facts: headings, code (fenced or indented), HTML comments, thematic
breaks, and the host's dreaming blocks between their markers (as in a journal). A block nested
too deep to parse is one fact of its lines as they are, comments out, as a journal reads it.
With `header=False` (recall's index), the paragraphs outside every container before the first
list item or quote of a file that has one are its header ("Long-term memory, curated by
hand."), not facts.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

from memfuse.workspace.blocks import PIECE, token_chunks
from memfuse.workspace.comments import comment_spans, dreaming_blocks, without

# Past this size (a MEMORY.md over 1 000 times its 200-line limit: a planted one) the file is read
# in pieces cut between top-level blocks, so that what is held is one piece's tokens, not the
# 1.3 GB that 4 MiB of short items parsed whole held. A comment or fence left open at the end
# of a piece then hides only to the piece's end, where a viewer would hide the rest.
WHOLE = 1 << 18
_TAG = re.compile(r"</?[A-Za-z][^<>]*>|<[!?][^<>]*>")
_RAW = re.compile(r" {0,3}<(?:script|style|pre|textarea)(?:[\s>]|$)", re.IGNORECASE)


def memory_md_facts(text: str, *, header: bool = True) -> list[tuple[int, str]]:
    """Read MEMORY.md's facts, in file order, each with the 1-based line it starts on; its
    header among them unless `header` is False."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    dreamt = {n for first, end in dreaming_blocks(lines) for n in range(first, end)}
    facts: list[tuple[int, str]] = []
    preamble: int | None = None  # how many facts came before the first in a container

    def fact(line: int, raw: str, *, inline: bool, tags: bool = False) -> None:
        shown = without(raw, comment_spans(raw, inline=inline))
        folded = " ".join((_TAG.sub(" ", shown) if tags else shown).split())
        if folded and line not in dreamt:
            facts.append((line + 1, folded))

    piece = PIECE if len(text) > WHOLE else None
    for first, end, tokens in token_chunks(lines, piece):
        if tokens is None:  # nested too deep to parse: its lines as they are
            fact(first, "\n".join(lines[first:end]), inline=True)
            continue
        for n, token in enumerate(tokens):
            if token.map is None:
                continue
            if token.type == "inline" and tokens[n - 1].type == "paragraph_open":
                if preamble is None and tokens[n - 1].level > 0:
                    preamble = len(facts)
                fact(first + token.map[0], token.content, inline=True)
            elif token.type == "html_block" and not _RAW.match(token.content):
                fact(first + token.map[0], token.content, inline=False, tags=True)
    return facts if header or preamble is None else facts[preamble:]


def last_backup(folder: Path) -> Path | None:
    """The newest MEMORY.md backup that is not empty (names and sizes only; a folder of the
    workspace is looked at for BACKUPS_LOOKED_AT entries at most)."""
    try:
        with os.scandir(folder) as entries:
            found = [e for e in itertools.islice(entries, BACKUPS_LOOKED_AT)
                     if e.name.startswith("MEMORY.md.bak-") and e.is_file(follow_symlinks=False)
                     and e.stat(follow_symlinks=False).st_size > 0]  # fmt: skip
    except OSError:
        return None
    return folder / max(e.name for e in found) if found else None


BACKUPS_LOOKED_AT = 10_000
