"""Whatever a Markdown viewer shows as a list item is a bullet (issue 39, families 2-6 and 8):
the only exclusions are code, the text of HTML comments and OpenClaw's dreaming blocks between
their own markers, each tallied with every other line of visible text."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memfuse.workspace import blocks
from memfuse.workspace.bullets import Tally
from memfuse.workspace.journal import parse, parse_bytes, read
from memfuse.workspace.layout import Workspace
from memfuse.workspace.rollup import roll_up
from memfuse.workspace.weekly import weekly_sections
from tests.conftest import examples


def seen(text: str) -> list[tuple[str, str]]:
    return [(b.position, b.text) for b in parse(text)]


def test_the_text_after_an_inline_comment_that_opens_an_item_is_the_bullet() -> None:
    text = (
        "## 09:00\n- <!-- src:chat --> The deploy key rotates on Monday\n"
        "- <!-- src:chat -->\n  Billing moves to Stripe\n- plain one\n"
        "* <!-- a --> two <!-- b --> comments\n"
    )
    assert seen(text) == [
        ("0900-1", "The deploy key rotates on Monday"),
        ("0900-2", "Billing moves to Stripe"),
        ("0900-3", "plain one"),
        ("0900-4", "two  comments"),
    ]
    tally = read(text)[1]
    assert (tally.items, tally.empty, tally.comments) == (4, 0, 4)
    assert tally.comment_chars == len("<!-- src:chat -->") * 2 + len("<!-- a --><!-- b -->")


def test_an_item_of_nothing_but_comments_is_empty_and_counted() -> None:
    text = "- <!-- only a comment -->\n- kept\n"
    assert seen(text) == [("0000-1", "kept")]
    assert read(text)[1].empty == 1


def test_an_over_deep_blank_or_indented_line_loses_no_bullet() -> None:
    for odd in [" " * 130, " " * 125 + "deeply indented text", "\t" * 40 + "tabbed"]:
        text = (
            "## 09:00\n- one\n\nA paragraph,\n" + odd + "\n\n- two\n> - quoted\n\n"
            "Text then\n\n- three\n  1. nested\n\nmore\n- four\n- five\n"
        )
        assert [b.text for b in parse(text)] == [
            "one", "two", "quoted", "three\n1. nested", "four", "five",
        ], repr(odd)  # fmt: skip


def test_a_line_nested_past_the_parsers_depth_loses_no_later_bullet() -> None:
    hostile = "> " * 200 + "- buried"
    text = f"## 09:00\n- one\n\nSome prose.\n{hostile}\n\nMore prose\n\n> - quoted\n\n- two\n"
    found = [b.text for b in parse(text)]
    assert found[0] == "one" and found[-2:] == ["quoted", "two"]
    assert any("buried" in t for t in found)  # the deep block is one bullet, as it is
    assert read(text)[1].deep_lines >= 1


def test_notes_after_a_dreaming_block_and_under_a_users_deep_sleep_heading_are_bullets() -> None:
    text = (
        "## Light Sleep\n<!-- openclaw:dreaming:light:start -->\n- Candidate: restated\n"
        "<!-- openclaw:dreaming:light:end -->\n- Appended by the agent after the block\n\n"
        "## Deep sleep\n- Slept 8 hours, felt rested\n\n## REM Sleep\n"
        "<!-- openclaw:dreaming:rem:start -->\n- Theme\n### Reflections\n- more theme\n"
        "<!-- openclaw:dreaming:rem:end -->\n- After REM\n"
    )
    assert [b.text for b in parse(text)] == [
        "Appended by the agent after the block", "Slept 8 hours, felt rested", "After REM",
    ]  # fmt: skip
    tally = read(text)[1]
    assert (tally.dreaming_blocks, tally.dreaming_lines, tally.comments) == (2, 8, 0)


def test_an_unclosed_dreaming_marker_excludes_nothing() -> None:
    text = "<!-- openclaw:dreaming:light:start -->\n- kept\n<!-- openclaw:dreaming:rem:end -->\n"
    assert [b.text for b in parse(text)] == ["kept"]
    assert read(text)[1].dreaming_blocks == 0


def test_a_list_in_a_block_quote_is_bullets() -> None:
    text = (
        "## 10:00\n> - Migrate billing before Friday\n>   with the runbook\n> - Second\n"
        "> > 1. Nested quote, numbered\nlazy line\n\n- after\n"
    )
    assert seen(text) == [
        ("1000-1", "Migrate billing before Friday\nwith the runbook"),
        ("1000-2", "Second"),
        ("1000-1001", "Nested quote, numbered\nlazy line"),
        ("1000-3", "after"),
    ]


def test_a_bullet_holding_a_heading_reads_back_the_same_from_its_roll_up(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    daily = memory / "2026-02-17.md"
    daily.write_text(
        "# 2026-02-17\n## 09:00\n- Cutover checklist\n  ## Before the cutover\n"
        "  - freeze writes\n- Plain note\n"
    )
    before = [(b.key, b.text) for b in parse(daily.read_text())]
    rolled = roll_up(Workspace(tmp_path), date(2026, 2, 17), daily, daily.read_bytes())
    sections = weekly_sections(rolled.weekly.read_text())[date(2026, 2, 17)]
    assert [(b.key, b.text) for s in sections for b in s.bullets] == before
    assert "  ## Before the cutover" in rolled.weekly.read_text()


def test_a_comment_flood_in_one_bullet_is_read_whole() -> None:
    count = examples(150_000)  # CI's flood is 1 MiB a bullet; the loop's a quarter
    flood = "<!---->" * count
    text = f"- before {flood} after\n- {flood}\n- next\n"
    assert [b.text for b in parse(text)] == ["before  after", "next"]
    tally = read(text)[1]
    assert (tally.comments, tally.empty) == (2 * count, 1)


def test_the_tally_names_code_and_prose_outside_bullets() -> None:
    text = (
        "# Journal\nA paragraph\nof two lines.\n\n    indented code\n\n```\n- fenced\n```\n"
        "<div>raw html</div>\n\n- bullet\n"
    )
    bullets, tally = read(text)
    assert [b.text for b in bullets] == ["bullet"]
    assert tally == Tally(items=1, code_lines=4, other_lines=3, first_other=2)
    assert parse_bytes(text.encode()).tally == tally


def test_a_roll_up_section_carries_its_tally_at_the_roll_ups_lines() -> None:
    weekly = "# Week of 2026-02-16\n\n## 2026-02-17\n\nProse here.\n- a\n    \n```\ncode\n```\n"
    (section,) = weekly_sections(weekly)[date(2026, 2, 17)]
    assert [b.line for b in section.bullets] == [6]
    assert section.tally == Tally(items=1, code_lines=3, other_lines=1, first_other=5)


def test_each_byte_is_scanned_for_comments_once_however_many_comments_items_or_headings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Family 8's cost, counted rather than timed: the comment scan (the one step that looks
    at a comment's text) sees each character of the journal at most once, so the reading stays
    linear in bytes (its time at 1×/10×/100×: benchmarks/journal_costs.py)."""
    scanned = []
    real = blocks.comment_spans

    def counting(text: str, *, inline: bool) -> list[tuple[int, int]]:
        scanned.append(len(text))
        return real(text, inline=inline)

    monkeypatch.setattr(blocks, "comment_spans", counting)
    many = examples(3000)  # each bar is relative to the text's length: CI's sizes, a quarter
    for text in [
        "- a " + "<!---->" * examples(50_000) + " b\n",
        "".join(
            f"## {i % 24}:00\n- n <!-- c {i} --> t\n  - nested <!-- d -->\n" for i in range(many)
        ),
        "> - quoted <!-- x -->\n" * many + "<!-- outside -->\n" * many,
        "- a\n" + "  x <!-- c --> y\n" * examples(5000),
    ]:
        scanned.clear()
        read(text)
        assert 0 < sum(scanned) <= len(text)


def test_a_days_journal_carries_each_forms_tally(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "2026-02-17.md").write_text("- a <!-- c -->\n\nProse.\n")
    (journal,) = Workspace(tmp_path).journals([date(2026, 2, 17)], lambda _message: None)
    assert journal.tallies == (
        (memory / "2026-02-17.md", Tally(items=1, comments=1, comment_chars=10, other_lines=1,
                                         first_other=3)),
    )  # fmt: skip


PIECES = ["- ", "* ", "1. ", "> ", ">", "  ", "\t", "\n", "\n\n", "<!--", "-->", "<!-->", "`",
          "```", "~~~", "## 10:00 ", "# ", "text", "中文", "✨", "<div>", "\\",
          "<!-- openclaw:dreaming:rem:start -->\n", "<!-- openclaw:dreaming:rem:end -->\n"]  # fmt: skip


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_any_mix_of_containers_comments_and_markers_reads_and_adds_up(pieces: list[str]) -> None:
    text = "".join(pieces)
    bullets, tally = read(text)
    assert tally.items == len(bullets) + tally.empty
    assert len({b.position for b in bullets}) == len(bullets)
    assert all(b.text and b.text == b.text.strip() for b in bullets)
