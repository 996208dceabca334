"""Journals as agents and people write them, and commonmark.js's reading of them: the
independent reader memfuse's journal grammar is compared with (tests/unit/test_journal_reader.py,
and the longer fuzz benchmarks/journal_fuzz.py).

commonmark.js (the CommonMark reference implementation, 0.31.2, installed under tools/ by
scripts/setup.sh) is another parser than markdown-it: what both call an outermost list item,
its section and whether it shows any text must agree, every word commonmark.js shows of an
item is in its bullet, and text inside a comment (each holds the word `hidden`) is in a bullet
only where commonmark.js shows it too.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memfuse.workspace.journal import parse

ROOT = Path(__file__).resolve().parents[2]
READER = ROOT / "tests" / "reader" / "items.js"
COMMONMARK = ROOT / "tools" / "node_modules" / "commonmark"

WORDS = ["billing", "deploy", "Maria", "Friday", "迁移", "数据库", "✨", "🚀", "OPS-42", "runbook"]
HEADINGS = ["# Journal", "## 09:30 standup", "## 14:00", "### 22:00 sync", "## Notes",
            "## Light Sleep", "## Deep sleep", "#### 7:05 late", "## 会议 10:15", "Setext 11:00\n===",
            "Setext\n---", "## closed ##"]  # fmt: skip
MARKERS = ["- ", "* ", "+ ", "1. ", "2) ", "10. ", "-\t", "-   "]
COMMENTS = ["<!-- src:chat hidden -->", "<!---->", "<!-- hidden\nstill hidden -->", "<!-->"]
DREAMING = ["light", "rem", "deep"]


def _words(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))


def _item(rng: random.Random, indent: str = "") -> list[str]:
    """One item, maybe opened by a comment, with nested items, continuation and lazy lines."""
    marker = rng.choice(MARKERS)
    head = _words(rng)
    r = rng.random()
    if r < 0.12:
        head = f"{rng.choice(COMMENTS)} {head}"
    elif r < 0.18:
        head = f"{head} `<!-- hidden in code -->` {_words(rng)}"
    elif r < 0.22:
        head = f"{head} {rng.choice(COMMENTS)} {_words(rng)}"
    lines = [f"{indent}{marker}{head}"]
    pad = indent + " " * len(marker.expandtabs(4))
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2, 3])):
        kind = rng.random()
        if kind < 0.3:
            lines.append(f"{pad}{rng.choice(['- ', '* ', '1. '])}{_words(rng)}")
        elif kind < 0.5:
            lines.append(f"{pad}{_words(rng)}")
        elif kind < 0.6:
            lines.append(_words(rng))  # lazy
        elif kind < 0.7:
            lines += ["", f"{pad}{_words(rng)}"]
        elif kind < 0.78:
            lines += [f"{pad}```", f"{pad}- {_words(rng)} in a fence", f"{pad}```"]
        elif kind < 0.85:
            lines.append(f"{pad}## {_words(rng)}")  # a heading inside the item
        elif kind < 0.88:
            lines.append(f"{pad}> {_words(rng)}")
        elif kind < 0.94:  # a nested marker wandering in indentation
            lines.append(" " * rng.randint(2, 11) + f"{rng.choice('-*+')} {_words(rng)}")
        else:
            lines.append(f"\t{_words(rng)}")
    return lines


def _block(rng: random.Random) -> list[str]:
    r = rng.random()
    if r < 0.45:
        return _item(rng)
    if r < 0.55:
        return [rng.choice(HEADINGS)]
    if r < 0.62:
        return [_words(rng), _words(rng)] if rng.random() < 0.5 else [_words(rng)]
    if r < 0.68:
        quoted = _item(rng) if rng.random() < 0.7 else [_words(rng)]
        prefix = rng.choice(["> ", ">", "> > "])
        return [prefix + line for line in quoted]
    if r < 0.72:
        return ["```" + rng.choice(["", "python"]), f"- {_words(rng)} fenced", "```"]
    if r < 0.74:
        return ["~~~", f"- {_words(rng)} in an open fence"]  # an open fence: the rest is code
    if r < 0.78:
        return ["", f"    - {_words(rng)} indented code", ""]
    if r < 0.83:
        kind = rng.choice(DREAMING)
        body = [f"- {_words(rng)} dreamt", f"### {_words(rng)}", f"- {_words(rng)}"]
        end = [f"<!-- openclaw:dreaming:{kind}:end -->"] if rng.random() < 0.8 else []
        return [f"<!-- openclaw:dreaming:{kind}:start -->", *body, *end]
    if r < 0.87:
        return ["<!--", f"- {_words(rng)} hidden", "-->"]
    if r < 0.9:
        return [" " * rng.choice([130, 125]) + rng.choice(["", _words(rng)])]  # over-deep
    if r < 0.93:
        return ["<details>", f"- {_words(rng)} raw html", "</details>", ""]
    if r < 0.96:
        return [f"{rng.choice(COMMENTS)} {_words(rng)}"]
    return [""]


def journal(rng: random.Random) -> str:
    """One generated journal; a few are CRLF, a few indent with tabs."""
    lines: list[str] = []
    for _ in range(rng.randint(1, 14)):
        lines += _block(rng)
        if rng.random() < 0.4:
            lines.append("")
    text = "\n".join(lines) + "\n"
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    return text


@dataclass(frozen=True)
class Seen:
    key: str
    line: int
    ordered: bool


def commonmark_js(texts: list[str]) -> list[list[dict[str, object]]]:
    """commonmark.js's outermost items of each text (tests/reader/items.js)."""
    done = subprocess.run(
        ["node", str(READER)], input=json.dumps(texts), capture_output=True, text=True,
        check=True, timeout=600,
    )  # fmt: skip
    return list(json.loads(done.stdout))


_WORD = re.compile(r"\w+")


def differences(text: str, theirs: list[dict[str, object]]) -> list[str]:
    """How memfuse's bullets of a text differ from commonmark.js's items ([] when they agree)."""
    ours = parse(text)
    shown = [i for i in theirs if str(i["text"]).strip()]
    mine = [Seen(b.key, b.line, b.n > 1000) for b in ours]
    their = [Seen(str(i["key"]), int(str(i["line"])), bool(i["ordered"])) for i in shown]
    found = []
    if mine != their:
        found.append(f"items: memfuse {mine} / commonmark.js {their}")
    else:
        for bullet, item in zip(ours, shown, strict=True):
            if ("hidden" in bullet.text) != ("hidden" in str(item["text"])):
                found.append(
                    f"comment text at line {bullet.line}: {bullet.text!r} / {item['text']!r}"
                )
            lost = set(_WORD.findall(str(item["text"]))) - set(_WORD.findall(bullet.text))
            if lost:
                found.append(f"words shown but not in the bullet at line {bullet.line}: {lost}")
    return found


# Where the two CommonMark readers are known to part, each recorded in docs/decisions.md:
# memfuse follows markdown-it there (decision 107), and a difference elsewhere is a failure.
_QUOTES = re.compile(r"(?: {0,3}> ?)*")
_ITEM = re.compile(r"( *)(?:[-*+]|[0-9]{1,9}[.)])([ \t]+)\S")
_OPENER = re.compile(r"( {4,})(?:#{1,6}(?:[ \t]|$)|```|~~~|>|[-*+][ \t]|[0-9]{1,9}[.)][ \t])")


def _opener_indented_under_an_item(text: str) -> bool:
    """A line indented 4 or more that would open a block (a heading, a fence, a quote, an
    item) in the paragraph of an item whose content starts further right: commonmark.js
    takes it lazily into that paragraph (indented 4 from its own container, it opens
    nothing), markdown-it lets it open its block after the item (measured from the item)."""
    content = 0  # where the content of the last item line of this run of lines starts
    for quoted in text.replace("\r\n", "\n").split("\n"):
        line = quoted[_QUOTES.match(quoted).end() :]  # type: ignore[union-attr]
        if not line.strip():
            content = 0
        elif (opener := _OPENER.match(line)) and 0 < len(opener[1]) < content:
            return True
        elif item := _ITEM.match(line):
            content = len(item[0]) - 1
    return False


DIVERGENCES: dict[str, Callable[[str], bool]] = {
    # decision 180: a nested marker 4 past the outer item's content after items it closes
    # (`- a` / `     - b` / `       - c` / `      - d`): markdown-it makes it indented code
    "a nested marker that closes items into indented code": re.compile(
        r"^ {5,}[-*+] .*\n {7,}[-*+] .*\n {6}[-*+] ", re.MULTILINE
    ).search,
    # decision 283: a tab after a list marker inside two or more block quotes: markdown-it
    # counts the tab's columns from the quote's start, commonmark.js from the line's
    "a tab after a list marker inside nested block quotes": re.compile(
        r"^(?: {0,3}> ?){2,} {0,3}(?:[-*+]|[0-9]{1,9}[.)])\t", re.MULTILINE
    ).search,
    # decision 283: `   - a` / `    ## b` (b left of a's content, 4 or more in), or a fence,
    # a quote or a marker there
    "a block opener indented under an item's content": _opener_indented_under_an_item,
}


def divergence(text: str) -> str | None:
    """The recorded divergence this journal holds, if any."""
    return next((name for name, holds in DIVERGENCES.items() if holds(text)), None)
