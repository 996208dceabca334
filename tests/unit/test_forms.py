"""A day's bullets as the union of its forms (memfuse.workspace.forms), with plain data."""

from __future__ import annotations

from pathlib import Path

from memfuse.workspace.forms import Part, union
from memfuse.workspace.journal import parse

ARCHIVED, DAILY, WEEKLY = Path("archive/d.md"), Path("d.md"), Path("weekly/w.md")


def part(path: Path, text: str) -> Part:
    return Part(path, tuple(parse(text)))


def places(text_by_form: list[tuple[Path, str]]) -> list[tuple[str, str, str]]:
    merged = union([part(p, t) for p, t in text_by_form])
    pairs = zip(merged.bullets, merged.origins, strict=True)
    return [(b.position, b.text, o.as_posix()) for b, o in pairs]


def test_one_form_keeps_every_position_it_has() -> None:
    text = "- a\n- a\n## 14:00\n- b\n1. c\n"
    assert places([(DAILY, text)]) == [
        ("0000-1", "a", "d.md"), ("0000-2", "a", "d.md"), ("1400-1", "b", "d.md"),
        ("1400-1001", "c", "d.md"),
    ]  # fmt: skip


def test_a_later_form_adds_only_what_the_earlier_ones_lack_at_the_next_free_place() -> None:
    archived = "## 14:00\n- a\n- b\n"
    late = "## 14:00\n- b\n- c\n## 16:00\n- d\n1. e\n"
    assert places([(ARCHIVED, archived), (DAILY, late)]) == [
        ("1400-1", "a", "archive/d.md"), ("1400-2", "b", "archive/d.md"),
        ("1400-3", "c", "d.md"), ("1600-1", "d", "d.md"), ("1600-1001", "e", "d.md"),
    ]  # fmt: skip


def test_copies_in_a_roll_up_are_one_bullet_and_repeats_within_a_form_are_two() -> None:
    archived = "- a\n- a\n"
    rolled = "#### 09:00\n- a\n- a\n- a\n"  # headings shifted; one more `a` written in it
    assert places([(ARCHIVED, archived), (WEEKLY, rolled)]) == [
        ("0000-1", "a", "archive/d.md"), ("0000-2", "a", "archive/d.md"),
        ("0900-1", "a", "weekly/w.md"),
    ]  # fmt: skip


def test_archiving_a_late_form_keeps_its_positions() -> None:
    first, late = "## 14:00\n- a\n", "## 14:00\n- c\n"
    before = places([(ARCHIVED, first), (DAILY, late), (WEEKLY, "#### 14:00\n- a\n")])
    after = places([(ARCHIVED, first), (Path("archive/d.1.md"), late),
                    (WEEKLY, "#### 14:00\n- a\n"), (WEEKLY, "#### 14:00\n- c\n")])  # fmt: skip
    assert [p[:2] for p in before] == [p[:2] for p in after] == [("1400-1", "a"), ("1400-2", "c")]


def test_a_section_of_over_a_thousand_items_and_numbered_ones_never_shares_a_position() -> None:
    many = "## 14:00\n" + "".join(f"- note {i}\n" for i in range(1001)) + "\n1. numbered\n"
    late = "## 14:00\n2. numbered too\n- one more\n"
    found = places([(ARCHIVED, many), (DAILY, late)])
    positions = [position for position, _text, _origin in found]
    assert len(positions) == len(set(positions)) == 1004
    assert ("1400-1001", "note 1000", "archive/d.md") in found  # the file's first keeps it
    assert {text for _p, text, _o in found} >= {"numbered", "numbered too", "one more"}
