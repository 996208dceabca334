"""MEMORY.md's facts are what a viewer shows as text (issue 48): read by the journals'
CommonMark reader, held against markdown-it-py rendering the file to HTML."""

from __future__ import annotations

import random
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from memfuse.workspace.memory_md import WHOLE, memory_md_facts

# The issue's file: the regex reader gave lines 4, 7 and 8 as facts.
ISSUES = (
    "# MEMORY\n\n```bash\nrm -rf / # not a fact\n```\n<!--\nhidden note\n-->\n"
    "- User prefers dark mode\n"
)


def test_code_and_comments_in_memory_md_are_no_facts() -> None:
    assert memory_md_facts(ISSUES) == [(9, "User prefers dark mode")]


def test_dreaming_blocks_are_no_facts_and_the_agents_lines_after_them_are() -> None:
    text = (
        "## Promoted\n<!-- openclaw:dreaming:light:start -->\n- Candidate: restated\n"
        "Prose of the dream\n<!-- openclaw:dreaming:light:end -->\n- Alice prefers tea\n"
    )
    assert memory_md_facts(text) == [(6, "Alice prefers tea")]


def test_a_fact_is_a_paragraph_wherever_it_sits() -> None:
    text = (
        "# MEMORY\n- Alice prefers tea\n  over coffee\n  - nested: Bob is on call\n"
        "> quoted: the freeze starts Friday\nlazily continued\n\n"
        "- <!-- src:chat --> The deploy key rotates on Monday\n\n"
        "Prose <!-- aside --> kept\n\n    indented code\n\n---\n"
        "<script>\nnot shown\n</script>\n\n<div>shown in a box</div>\n"
    )
    assert memory_md_facts(text) == [
        (2, "Alice prefers tea over coffee"),
        (4, "nested: Bob is on call"),
        (5, "quoted: the freeze starts Friday lazily continued"),
        (8, "The deploy key rotates on Monday"),
        (10, "Prose kept"),
        (19, "shown in a box"),
    ]


def test_a_line_nested_past_the_parsers_depth_is_one_fact_and_later_facts_stay() -> None:
    text = "- first\n\n" + "> " * 200 + "- buried\n\n- last\n"
    facts = memory_md_facts(text)
    assert facts[0] == (1, "first") and facts[-1] == (5, "last")
    assert any("buried" in fact for _line, fact in facts[1:-1])


_BLOCKS = frozenset({"p", "li", "ul", "ol", "blockquote", "hr", "div", "pre", "script"})
_HIDDEN = frozenset({"pre", "script", "h1", "h2", "h3", "h4", "h5", "h6"})


class _Shown(HTMLParser):
    """The text a browser shows of rendered Markdown, one entry a block: headings, code,
    scripts and comments left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self.kept: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.block(tag, +1)

    def handle_endtag(self, tag: str) -> None:
        self.block(tag, -1)

    def block(self, tag: str, step: int) -> None:
        if tag in _BLOCKS or tag in _HIDDEN:
            self.flush()
        if tag in _HIDDEN:
            self.hidden += step

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.kept.append(data)

    def flush(self) -> None:
        text = " ".join("".join(self.kept).split())
        if text:
            self.texts.append(text)
        self.kept = []


def shown(text: str) -> list[str]:
    """What a browser shows of markdown-it's HTML, one entry a paragraph or HTML block (a
    tight list's paragraphs kept in their `<p>`, which changes none of the text shown)."""
    renderer = MarkdownIt("commonmark")
    tokens = renderer.parse(text)
    for token in tokens:
        token.hidden = False
    viewer = _Shown()
    viewer.feed(renderer.renderer.render(tokens, renderer.options, {}))
    viewer.close()
    viewer.flush()
    return viewer.texts


_WORDS = ["alice", "prefers", "tea", "dark", "mode", "billing", "friday", "中文"]
_PIECES = [
    "- {}",
    "  - {}",
    "1. {}",
    "* {}",
    "> {}",
    "> - {}",
    "{}",
    "{}",
    "{} <!-- {} --> {}",
    "# {}",
    "## {}",
    "```\n{}\n```",
    "    {}",
    "<!--\n{}\n-->",
    "<!-- {} -->",
    "- <!-- {} --> {}",
    '\n<div align="center"></div>\n',
    "---",
    "***",
    "",
    "",
    "~~~\n- {}\n~~~",
    "  {}",
    "<!-- openclaw:x -->",
]


def memory_md(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(1, 14)):
        piece = rng.choice(_PIECES)
        words = [" ".join(rng.choices(_WORDS, k=rng.randint(1, 3))) for _ in range(3)]
        lines.append(piece.format(*words))
    return "\n".join(lines) + "\n"


def test_generated_memory_md_facts_are_the_text_a_renderer_shows() -> None:
    rng = random.Random(48)
    for _ in range(400):
        text = memory_md(rng)
        assert [fact for _line, fact in memory_md_facts(text)] == shown(text), text


def test_the_renderer_comparison_has_teeth() -> None:
    """The regex reader's facts differ from what the renderer shows on the issue's file."""
    assert shown(ISSUES) == ["User prefers dark mode"]
    regex_facts = ["rm -rf / # not a fact", "hidden note", "-->", "User prefers dark mode"]
    assert regex_facts != shown(ISSUES)


def test_a_planted_huge_memory_md_is_parsed_a_piece_at_a_time_with_the_same_facts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Parsed whole, 4 MiB of short items held 1.3 GB of tokens (review of issue 48): past
    WHOLE bytes the parser sees a few thousand lines at once, and the facts are the same."""
    from memfuse.workspace import blocks

    item = "- Alice prefers tea\n  over coffee\n\n> quoted: the freeze starts Friday\n# Heading\n"
    text = item * (WHOLE // len(item) + 1)
    lines_parsed: list[int] = []
    parse = blocks._parsed

    def counted(lines: list[str]) -> object:
        lines_parsed.append(len(lines))
        return parse(lines)

    whole = memory_md_facts(text[: len(item) * 10])
    monkeypatch.setattr(blocks, "_parsed", counted)
    facts = memory_md_facts(text)
    assert len(facts) == 2 * (len(text) // len(item))
    assert facts[:4] == whole[:4]
    assert facts[-1][1] == "quoted: the freeze starts Friday"
    assert len(lines_parsed) > 1
    assert max(lines_parsed) <= blocks.PIECE + 10


def test_a_header_before_the_first_list_is_not_a_fact_for_recall() -> None:
    text = "# Memory\n\nLong-term memory, curated by hand.\n\n## People\n- Omar is on call.\n\nLater prose.\n"
    assert memory_md_facts(text, header=False) == [(6, "Omar is on call."), (8, "Later prose.")]
    assert memory_md_facts(text)[0] == (3, "Long-term memory, curated by hand.")
    prose = "I live in Berlin.\n\nI work from home.\n"  # no list: every paragraph is a fact
    assert memory_md_facts(prose, header=False) == memory_md_facts(prose)
