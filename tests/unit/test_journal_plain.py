"""The plain reading of a journal (line by line) against markdown-it's: the same bullets, at the
same positions and lines, in the same sections, on every journal it takes (decisions 170)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memfuse.workspace.blocks import read_blocks
from memfuse.workspace.bullets import Bullet
from memfuse.workspace.journal import parse
from memfuse.workspace.plain import read_plain
from tests.conftest import examples

# Lines as journals hold them, and the lines that border on something else: an indented
# marker, a heading with a closing sequence, text that would open a block of its own, Unicode
# space, a numbered item, a thematic break, a setext underline, a fence, HTML.
HEADINGS = ["# Journal", "## 09:30 standup", "## 14:00", "### 22:00 memory-sync", "## Notes",
            "## Light Sleep", "### REM Sleep", "#### deep 7:05", "###### six", "####### seven",
            "## C#", "## closed ##", "##", "#tag", " ## indented", "## 25:00 not a time"]  # fmt: skip
STARTS = ["note", "**bold** note", "*em*", "-5 degrees", "+1", "2024 was", "3. numbered",
          "1) numbered", "_under_", "___", "***", "* * *", "---", "===", "= x", "> quote",
          "[ref]: /url", "```", "~~~", "`code`", "\\- escaped", "#", "\u3000wide", "\xa0nb",
          "中文 笔记", "C# and F#", "a <b>", "<!-- c -->", "x\ty", "", " ", "<div>", "<b>bold</b>",
          "a < b", "see <https://x.example>", "a <!-- c --> b", "<"]  # fmt: skip
MARKERS = ["- ", "* ", "+ ", "-  ", "- - ", "-", "1. ", "2) "]


def _line(choose: Callable[[Sequence[Any]], Any]) -> str:
    """One line, its parts chosen by `choose` (hypothesis's draw, or a seeded generator's)."""
    kind = choose(["heading", "item", "item", "item", "text", "blank"])
    if kind == "heading":
        return str(choose(HEADINGS))
    if kind == "blank":
        return " " * choose([0, 0, 1, 3])
    indent = " " * choose([0, 0, 0, 1, 2, 2, 3, 4, 5, 6, 8])
    marker = choose(MARKERS) if kind == "item" else ""
    words = choose(["", " about billing", " 迁移", " — OPS-00042"])
    return f"{indent}{marker}{choose(STARTS)}{words}"


journal_line = st.composite(lambda draw: _line(lambda xs: draw(st.sampled_from(xs))))()


def _same(text: str) -> bool:
    """Whether the plain reading took this journal; it must then agree with markdown-it."""
    plain = read_plain(text)
    if plain is None:
        return False
    blocks = read_blocks(text)
    assert _seen(plain.bullets) == _seen(blocks.bullets), text
    assert plain.tally() == blocks.tally(), text
    return True


def _seen(bullets: list[Bullet]) -> list[tuple[str, int, str, int]]:
    return [(b.key, b.n, b.text, b.line) for b in bullets]


@settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(journal_line, max_size=30))
def test_the_plain_reading_equals_markdown_it_on_any_journal_it_takes(lines: list[str]) -> None:
    _same("\n".join(lines))


def test_the_plain_reading_takes_journals_as_agents_write_them() -> None:
    journals = [
        "# Journal\n\n## 09:30 standup\n- Kicked off the billing migration\n- 今天最重要的事\n\n"
        "## 14:00 memory-sync\n- Wrote the runbook\n",
        "## 10:00\n- parent\n  - child\n    more text\n- next\ncontinued lazily\n\nparagraph\n",
        "## 22:00\n* star **bold**\n+ plus\n   - nested\n\n  after a blank, still the item\n",
        "- first\n\n- second, a loose list\n\n## Light Sleep\n- restated\n## 23:00\n- kept\n",
        "## 09:00\n- a <b>tag</b> inside, a < b, <https://x.example>\nlazy <i>\n",
    ]
    for text in journals:
        assert _same(text), text
        assert parse(text) == read_blocks(text).bullets


def test_journals_the_plain_reading_leaves_to_markdown_it() -> None:
    for text in [
        "- a\n```\n- fenced\n```\n",  # a fence
        "- a <!-- hidden -->\n",  # HTML
        "- a\n - b\n",  # a marker indented one space: an item of its own
        "1. numbered\n",
        "- a\n\n      code\nlazy or not\n",  # indented for code after a blank line
        "- a\n---\n",  # a setext underline
        "## closed ##\n- a\n",  # a closing sequence
        "- a\tb\n",  # a tab
        "- <div>\nnot lazy: an HTML block has no lazy line\n",  # `<` opening an item's text
        "- a\n  <b>x</b>\n",  # `<` opening a line's text
        "- a <!-- c --> b\n",  # a comment, anywhere
    ]:
        assert read_plain(text) is None, text
        assert _seen(parse(text)) == _seen(read_blocks(text).bullets)


def test_a_nested_marker_that_closes_items_into_indented_code_is_not_a_lazy_line() -> None:
    """`- d` closes `c` and `b` (it is left of their content) and is 4 past `a`'s: markdown-it
    reads it as indented code in `a`, so the `x` after it is a paragraph outside every item —
    the plain reading once took `x` lazily into `a`'s text."""
    text = "- a\n     - b\n       - c\n      - d\nx\n"
    assert _same(text) or read_plain(text) is None
    assert _seen(parse(text)) == [("0000", 1, "a\n- b\n- c\n- d", 1)]
    for text in [
        "- top\n     * item\n          * item\n      - item\n         * item\n after\n",
        "## 14:00\n- a\n     - b\n       - c\n      - d\n\n  y\nz\n- e\n",
        "- a\n     - b\n      - more of b's text\nlazy\n",  # markdown-it's special case
        "- a\n    - b\n  - c\n      - d\nlazy\n",
    ]:
        assert _same(text) or read_plain(text) is None, text


def _nesting(rng: random.Random) -> str:
    """An item whose nested markers and text wander in indentation, then one more line."""
    lines = ["- top"]
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.1:
            lines.append("")
        elif r < 0.25:
            lines.append(" " * rng.randint(0, 9) + "text")
        else:
            lines.append(" " * rng.randint(2, 11) + rng.choice("-*+") + " item")
    lines.append(rng.choice(["after", " after", "- next", "## 10:00"]))
    return "\n".join(lines)


def test_nested_items_at_any_indentation_read_the_same_either_way() -> None:
    rng, count = random.Random(35), examples(3000)
    assert sum(_same(_nesting(rng)) for _ in range(count)) > count * 2 // 3


def _agent_journal(rng: random.Random) -> str:
    """A journal as an agent writes one: timed sections of items, some with nested items or
    continuation lines, blank lines here and there."""
    lines = ["# Journal", ""] if rng.random() < 0.5 else []
    for _ in range(rng.randint(0, 4)):
        lines.append(rng.choice(["## 09:30 standup", "## 14:00", "### 22:00 sync", "## Notes"]))
        for _ in range(rng.randint(0, 12)):
            lines.append(rng.choice(["- ", "* ", "+ "]) + rng.choice(STARTS[:5]) + " text")
            for _ in range(rng.choice([0, 0, 0, 1, 2])):
                lines.append(rng.choice(["  - nested", "    - deeper", "  more", "lazy", ""]))
        lines.append("")
    return "\n".join(lines)


def test_journals_as_agents_write_them_are_all_read_plain_and_equal() -> None:
    rng = random.Random(32)
    for _ in range(examples(500)):
        text = _agent_journal(rng)
        assert _same(text), text


def test_agent_journals_with_border_lines_read_the_same_either_way() -> None:
    """Long journals, each with a few of the lines that border on another block put anywhere:
    the plain reading takes about half of them, and agrees with markdown-it on every one."""
    rng, count = random.Random(34), examples(1500)
    taken = 0
    for _ in range(count):
        lines = _agent_journal(rng).split("\n")
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            lines.insert(rng.randint(0, len(lines)), _line(rng.choice))
        taken += _same("\n".join(lines))
    assert taken > count // 5


def test_the_property_compares_many_journals_not_a_few() -> None:
    """The property above is not vacuous: of journals drawn from its lines, a fair share is
    plain and compared (the rest are markdown-it's alone)."""
    rng = random.Random(33)
    count = examples(2000)
    texts = ["\n".join(_line(rng.choice) for _ in range(rng.randint(0, 12))) for _ in range(count)]
    assert sum(_same(text) for text in texts) > count // 10
