"""What reading a deeply nested journal costs, counted in lines of Python run (the same on
every machine, unlike time): a line nested k containers deep is read at k levels, and each
level must cost the same, not a pass over the rest of the line or over what the level holds
(docs/decisions.md 320)."""

from __future__ import annotations

import random
import sys
from dataclasses import replace
from types import FrameType
from typing import Any

from memfuse.workspace import blocks
from memfuse.workspace.bullets import Tally
from memfuse.workspace.journal import read
from tests.reader.journals import journal
from tests.unit.test_block_parser import stock_parser


def _steps(text: str) -> int:
    """Lines of Python (and calls) run to read `text`."""
    steps = 0

    def count(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal steps
        steps += 1
        return count

    read("- - warm\n")  # markdown-it imported and its rule chains cached before counting
    before = sys.gettrace()
    sys.settrace(count)
    try:
        read(text)
    finally:
        sys.settrace(before)
    return steps


def _chains(depth: int, size: int) -> str:
    """Lines of `depth` list markers and a word, about `size` bytes of them."""
    line = " - " * depth + "a\n"
    return line * (size // len(line))


def test_a_line_nested_three_times_deeper_costs_no_more_a_byte() -> None:
    """Each of a chain's levels tried the thematic break on all the rest of the line, and each
    closing list walked every token below it: 90 markers deep cost twice a byte what 30 did."""
    shallow, deep = _chains(30, 8000), _chains(90, 8000)
    per_byte = [_steps(text) / len(text) for text in (shallow, deep)]
    assert per_byte[1] < 1.15 * per_byte[0], per_byte


def test_items_nested_deep_read_as_markdown_its_own_rules_read_them(monkeypatch: Any) -> None:
    text = "## 09:00\n" + _chains(90, 2000) + "1. " * 60 + "* * *\n" + "> - " * 40 + "_ _ _\n"
    bullets, tally = read(text)
    assert [b.text for b in bullets] == [
        *[(" - " * 89 + "a").strip()] * 7,
        "1. " * 59 + "* * *",
        "> - " * 39 + "_ _ _",
    ]
    assert tally == Tally(items=9)
    monkeypatch.setattr(blocks, "block_parser", stock_parser)
    assert read(text) == (bullets, tally)


FLAT = "- note <!-- src:chat --> about the deploy\n"  # markdown-it's to read (a comment)
HOSTILE = [
    ("", " - " * 90 + "a\n"),  # the hostile review's: items 90 deep on every line
    ("", "1. " * 60 + "> " * 30 + "a\n"),  # numbered items and quotes inside them
    ("> " * 90 + "a\n", "b\n"),  # lazy lines under 90 quotes: each swept at every level
    ("> " * 90 + "a\n", "> b\n"),  # lines going on with one quote of the 90
]


def _per_byte_more(head: str, unit: str) -> float:
    """Lines of Python run for each byte a journal of `unit` lines grows by."""
    small, large = head + unit * 40, head + unit * 80
    return (_steps(large) - _steps(small)) / (len(large) - len(small))


def test_past_its_budget_a_nested_journal_costs_a_byte_less_than_a_flat_one(
    monkeypatch: Any,
) -> None:
    """markdown-it costs ~40 µs a list item however it nests, and sweeps a quote's lines once
    per level: past BUDGET such levels, what is left is read block by block, a block that would
    cost more as it is. (raising=False: a reading without a budget fails on the work.)"""
    monkeypatch.setattr(blocks, "BUDGET", 1_000, raising=False)
    flat = _per_byte_more("", FLAT)
    for head, unit in HOSTILE:
        assert _per_byte_more(head, unit) < flat, unit


def test_past_its_budget_a_journal_keeps_every_bullet_and_counts_its_deep_lines(
    monkeypatch: Any,
) -> None:
    text = "## 09:00\n" + _chains(90, 40 * 273) + "- after\n  - nested <!-- c -->\n"
    bullets, tally = read(text)
    assert tally.deep_lines == 0 and len(bullets) == 41
    monkeypatch.setattr(blocks, "BUDGET", 1_000)  # 11 lines of 89 levels past the first
    past, counted = read(text)
    assert past == bullets  # a line's item read as it is is the item CommonMark reads
    assert counted.deep_lines == 29 and replace(counted, deep_lines=0) == tally


def test_a_hundredth_of_the_budget_reads_300_ordinary_journals_whole(monkeypatch: Any) -> None:
    """Quotes in quotes, items in items, lazy lines: agents' journals as the commonmark.js
    comparison generates them spend a few levels a journal, not thousands."""
    rng = random.Random(321)
    text = "\n\n".join(journal(rng) for _ in range(300))
    whole = read(text)
    monkeypatch.setattr(blocks, "BUDGET", 1_000)
    assert read(text) == whole and whole[1].deep_lines == 0
