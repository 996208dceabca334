from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memfuse.workspace.position import JournalPosition
from memfuse.workspace.recent_md import (
    STAMPED,
    Budget,
    Record,
    choose,
    foreign_lines,
    one_line,
    render,
    section_counts,
)
from tests.conftest import ANY_CHARACTER, examples

NOW = datetime(2026, 2, 28, 14, 5, tzinfo=UTC)
BUDGET = Budget()
HEADINGS = ["## 最近情感", "## 最近决策/知识", "## 最近事件"]


def rec(
    text: str, kind: str, days_ago: float | None = 1, vitality: float | None = 0.5, **kw: object
) -> Record:
    when = NOW - timedelta(days=days_ago) if days_ago is not None else None
    return Record(text, kind, vitality=vitality, when=when, **kw)  # type: ignore[arg-type]


def test_exact_layout() -> None:
    sections = choose([rec("Felt proud of the team", "emotion"), rec("Use UTC in logs", "knowledge"),
                       rec("Shipped 2.4", "event")], NOW, BUDGET)  # fmt: skip
    assert render(sections, NOW, BUDGET) == (
        "# RECENT.md\n\n_auto-updated: 2026-02-28 14:05_\n\n"
        "## 最近情感\n- Felt proud of the team\n\n"
        "## 最近决策/知识\n- Use UTC in logs\n\n"
        "## 最近事件\n- Shipped 2.4\n"
    )


def test_section_caps_and_line_budget_with_a_flood_of_memories() -> None:
    records = [rec(f"{kind} memory number {i} with distinct words {i * 7919}", kind, days_ago=i / 20)
               for kind in ("emotion", "knowledge", "event") for i in range(100)]  # fmt: skip
    text = render(choose(records, NOW, BUDGET), NOW, BUDGET)
    assert section_counts(text) == {"emotion": 8, "knowledge": 15, "event": 15}
    assert text.count("\n") <= 80


def test_section_counts_read_recent_md_as_commonmark_does() -> None:
    """Only what a viewer shows as an item of a section is an entry: not a fenced line, nor
    one in a comment, nor one under a heading that only looks like a title (issue 48)."""
    text = (
        "# RECENT.md\n\n## 最近情感\n```\n- fenced\n```\n<!--\n- commented\n-->\n"
        "## 最近决策/知识\n- Use UTC in logs\n  - nested, part of it\n"
        "    ## 最近事件\n- still knowledge\n\n## 最近事件\n> - quoted\n"
    )
    assert section_counts(text) == {"emotion": 0, "knowledge": 2, "event": 0}


def test_a_huge_multiline_cjk_memory_becomes_one_line_of_200_characters() -> None:
    huge = ("今天学到了很多关于记忆系统的事情。\n" * 300)[:5000]
    text = render(choose([rec(huge, "event")], NOW, BUDGET), NOW, BUDGET)
    entry = next(line for line in text.splitlines() if line.startswith("- "))
    assert len(entry) == 2 + 200
    assert entry.endswith("…")
    assert "\n" not in entry


def test_only_the_window_reaches_the_dated_sections_and_timeless_knowledge_stays() -> None:
    records = [rec("Old trip to Oslo", "event", days_ago=9), rec("Fresh deploy of 2.5", "event", days_ago=2),
               rec("Always answer in English", "knowledge", days_ago=None)]  # fmt: skip
    sections = choose(records, NOW, BUDGET)
    assert [r.content for r in sections["event"]] == ["Fresh deploy of 2.5"]
    assert [r.content for r in sections["knowledge"]] == ["Always answer in English"]


def test_near_duplicates_keep_the_more_vital_copy() -> None:
    records = [rec("Deployed the billing service to production", "event", vitality=0.4),
               rec("Deployed the billing service to  production!", "event", vitality=0.9),
               rec("同一件事：修好了登录问题", "event", vitality=0.2, id="a"),
               rec("同一件事：修好了登录问题。", "event", vitality=0.3)]  # fmt: skip
    kept = choose(records, NOW, BUDGET)["event"]
    assert [(r.content, r.vitality) for r in kept] == [
        ("Deployed the billing service to  production!", 0.9), ("同一件事：修好了登录问题。", 0.3),
    ]  # fmt: skip


def test_ordering_is_vitality_then_date() -> None:
    records = [rec("older but vital", "event", days_ago=5, vitality=0.9),
               rec("newer, same vitality", "event", days_ago=1, vitality=0.5),
               rec("older, same vitality", "event", days_ago=3, vitality=0.5)]  # fmt: skip
    assert [r.content for r in choose(records, NOW, BUDGET)["event"]] == [
        "older but vital", "newer, same vitality", "older, same vitality",
    ]  # fmt: skip


def test_missing_vitality_is_estimated_with_the_decay_model() -> None:
    records = [rec("two-week-old event", "event", days_ago=6, vitality=None),
               rec("fresh event", "event", days_ago=0.1, vitality=None)]  # fmt: skip
    chosen = choose(records, NOW, BUDGET)["event"]
    assert [r.content for r in chosen] == ["fresh event", "two-week-old event"]
    assert all(r.estimated for r in chosen)
    assert abs((chosen[1].vitality or 0) - 0.651) < 0.01  # e^(-6/14)


def test_journal_uri_carries_date_and_time() -> None:
    position = JournalPosition.parse("event://journal/2026-02-21#2205-3")
    assert position is not None
    assert position.moment(UTC) == datetime(2026, 2, 21, 22, 5, tzinfo=UTC)
    assert JournalPosition.parse("knowledge://preferences/editor") is None


def test_a_position_is_one_name_as_ledger_key_and_as_uri() -> None:
    position = JournalPosition.parse("2026-02-21#0900-12")
    assert position is not None
    assert position.uri("emotion") == "emotion://journal/2026-02-21#0900-12"
    assert JournalPosition.parse(position.uri("event")) == position
    assert position.source == "memory-sync:2026-02-21"
    for bad in ("2026-02-30#0900-1", "2026-02-21#0900-0", "event://journal/2026-02-21#9-1",
                "2026-02-21#0900-1\n", "２０２６-02-21#0900-1"):  # fmt: skip
        assert JournalPosition.parse(bad) is None, bad


def test_one_line_counts_characters_not_bytes() -> None:
    assert one_line("日" * 201, 200) == "日" * 199 + "…"
    assert one_line("  a \n\t b  ", 200) == "a b"


records_strategy = st.lists(
    st.builds(
        Record,
        content=st.text(ANY_CHARACTER, min_size=0, max_size=600),
        type=st.sampled_from(["emotion", "knowledge", "event", "identity", "other"]),
        vitality=st.one_of(st.none(), st.floats(0, 1)),
        when=st.one_of(st.none(), st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2026, 3, 10),
                                               timezones=st.just(UTC))),
    ),
    max_size=120,
)  # fmt: skip


@settings(max_examples=examples(150), deadline=None)
@given(records_strategy, st.integers(1, 200), st.integers(0, 60))
def test_any_records_render_within_budget(records: list[Record], max_lines: int, cap: int) -> None:
    budget = Budget(max_lines=max(max_lines, 9), emotion_cap=cap, knowledge_cap=cap, event_cap=cap)
    text = render(choose(records, NOW, budget), NOW, budget)
    lines = text.split("\n")[:-1]
    assert len(lines) <= budget.max_lines
    assert all(len(line) <= 202 for line in lines)
    assert [line for line in lines if line.startswith("## ")] == HEADINGS


def test_default_budget_fills_each_section_to_its_cap_within_80_lines() -> None:
    records = [
        rec(f"{k} x{i}\n" * 50, k, days_ago=i % 7)
        for i in range(300)
        for k in ("emotion", "knowledge", "event")
    ]
    text = render(choose(records, NOW, BUDGET), NOW, BUDGET)
    assert text.count("\n") <= 80
    entries: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("## "):
            entries[line] = []
        elif line.startswith("- "):
            list(entries.values())[-1].append(line)
    assert [len(e) for e in entries.values()] == [8, 15, 15]  # each section's cap, no starving
    assert all(len(line) <= BUDGET.entry_chars + 2 for e in entries.values() for line in e)


def test_a_huge_kept_copy_is_cut_in_one_pass_to_its_cap() -> None:
    """The agent can leave RECENT.kept.md at any size up to the read cap: cutting it back
    takes one pass (line by line from the front, it took minutes at 1 MiB)."""
    from datetime import datetime

    from memfuse.workspace.recent_md import KEPT_HEADER, KEPT_MAX, kept_text

    text, dropped = kept_text(
        KEPT_HEADER + "a\n" * (1 << 20), ["my own line"], datetime(2026, 12, 6)
    )
    assert len(text.encode()) <= KEPT_MAX
    assert text.rstrip().endswith("my own line") and dropped > 1 << 19


def test_the_template_time_line_is_memfuses_without_a_record_and_only_in_its_exact_form() -> None:
    new = render({}, NOW, BUDGET)
    assert STAMPED.fullmatch(new.splitlines()[2])  # the form render writes
    earlier = render({"event": [rec("met Bob", "event")]}, NOW - timedelta(days=3), BUDGET)
    current = earlier + "_auto-updated: soon_\n _auto-updated: 2026-12-07 03:12_\n"
    # A new state folder: no record of what memfuse wrote.
    assert foreign_lines(current, None, new) == [
        "- met Bob",
        "_auto-updated: soon_",
        " _auto-updated: 2026-12-07 03:12_",
    ]
