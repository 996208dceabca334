"""What reading a deeply nested journal costs, counted in lines of Python run (the same on
every machine, unlike time): a line nested k containers deep is read at k levels, and each
level must cost the same, not a pass over the rest of the line or over what the level holds
(docs/decisions.md 320)."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from memfuse.workspace import blocks
from memfuse.workspace.journal import Tally, read
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
