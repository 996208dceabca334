"""memfuse's block parser makes markdown-it's own tokens (memfuse.workspace.block_parser): its
thematic-break rule and its list rule without the tight-paragraph walk change what a parse
costs, never what it finds."""

from __future__ import annotations

import random

from markdown_it import MarkdownIt

from memfuse.workspace.block_parser import NESTING, block_parser
from tests.conftest import examples
from tests.reader.journals import journal

# Thematic breaks and their near misses, alone, in containers and after a paragraph.
BREAKS = [
    "***", "---", "___", " * * *", "   -  -  -  ", "\t***", "    ***", "**", "* *", "-- -",
    "***x", "*-*", "_ _ _ _ _", "-\t-\t-", "- - -", "- - - a", "* * * *\n- a", "a\n***",
    "a\n---", "a\n- - -", "> ***", "> - ---", "- * * *", "1. ___", "-\n---", "- a\n  ***",
    " - " * 90 + "a", " - " * 90 + "- -", "1. " * 50 + "* * *", "> - " * 40 + "_ _ _",
]  # fmt: skip
PIECES = ["- ", "* ", "_", "-", "*", " ", "  ", "\t", "> ", "1. ", "2) ", "a", "b c", "\n", "\n",
          "```", "# ", "<div>", "    ", "+ ", "<!-- x -->", "\n\n"]  # fmt: skip


def stock_parser() -> MarkdownIt:
    """The parser as markdown-it ships it, set up as memfuse's is."""
    return MarkdownIt("commonmark", {"maxNesting": NESTING}).disable(["inline", "text_join"])


def _tokens(parser: MarkdownIt, text: str) -> list[tuple[object, ...]]:
    """Every field of every token but `hidden`, which only rendering reads."""
    return [
        (t.type, t.tag, t.nesting, t.level, t.map, t.markup, t.info, t.content, t.block, t.attrs)
        for t in parser.parse(text)
    ]


def test_breaks_and_their_near_misses_make_markdown_its_tokens() -> None:
    stock = stock_parser()
    for text in BREAKS:
        assert _tokens(block_parser(), text) == _tokens(stock, text), text


def test_generated_journals_and_fragments_make_markdown_its_tokens() -> None:
    rng = random.Random(320)
    texts = [journal(rng) for _ in range(examples(300))]
    texts += ["".join(rng.choices(PIECES, k=rng.randint(1, 40))) for _ in range(examples(3000))]
    stock = stock_parser()
    for text in texts:
        assert _tokens(block_parser(), text) == _tokens(stock, text), text


def test_only_the_break_and_list_rules_are_memfuses() -> None:
    ours, stock = block_parser().block.ruler, stock_parser().block.ruler
    assert ours.get_active_rules() == stock.get_active_rules()
    for chain in ["", "paragraph", "reference", "blockquote", "list"]:
        mine, theirs = ours.getRules(chain), stock.getRules(chain)
        assert len(mine) == len(theirs), chain
        differ = {f.__module__ for f, g in zip(mine, theirs, strict=True) if f is not g}
        assert differ <= {"memfuse.workspace.block_parser", "markdown_it.rules_block.list"}
