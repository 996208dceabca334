"""The consistency rule (decision 65): a conflict is the same statement with one slot changed;
statements about the same thing are only related. Bilingual cases of each kind."""

from __future__ import annotations

import pytest

from memfuse.store.answers import StoredMemory
from memfuse.text.consistency import changed_slot, check
from memfuse.workspace.memory_md import memory_md_facts


def memory(text: str) -> StoredMemory:
    return StoredMemory(text, "knowledge")


@pytest.mark.parametrize(
    ("memory", "fact", "why"),
    [
        ("User prefers light mode", "User prefers dark mode", "an opposite word"),
        ("用户喜欢详细的回答", "用户喜欢简短的回答", "an opposite word"),
        ("User does not like coffee in the morning", "User likes coffee in the morning",
         "a negation on one side only"),
        ("用户不喜欢喝咖啡", "用户喜欢喝咖啡", "a negation on one side only"),
        ("The staging database listens on port 6543", "The staging database listens on port 5432",
         "a different number or date"),
        ("发布日期是 2026-12-20", "发布日期是 2026-12-15", "a different number or date"),
        ("Bob owns the billing service", "Alice owns the billing service", "a different name"),
        ("重要的事：User prefers light mode", "User prefers dark mode", "an opposite word"),
    ],
)  # fmt: skip
def test_the_same_statement_with_a_slot_changed_is_a_conflict(
    memory: str, fact: str, why: str
) -> None:
    assert changed_slot(memory, fact) == why


@pytest.mark.parametrize(
    ("memory", "fact"),
    [
        (
            "今天最重要的事：把 billing 迁移的风险清单写完",
            "当前最重要的事：十二月底前完成 billing 迁移",
        ),
        ("Billing migration risk list is due Friday", "Billing migration is the top priority"),
        ("周五前写完发布说明", "周五要发布新版本"),
        ("User prefers dark mode in every editor", "User prefers dark mode"),
    ],
)
def test_related_statements_are_not_conflicts(memory: str, fact: str) -> None:
    assert changed_slot(memory, fact) is None


def test_tidy_calls_the_demo_billing_pair_related_and_dark_light_a_conflict() -> None:
    memory_md = "- 当前最重要的事：十二月底前完成 billing 迁移\n- User prefers dark mode\n"
    findings = check(
        [memory("今天最重要的事：把 billing 迁移的风险清单写完"), memory("User prefers light mode")],
        memory_md_facts(memory_md), 0.85, 0.3,
    )  # fmt: skip
    assert [f.verdict for f in findings] == ["related", "conflict"]
    assert findings[1].why == "an opposite word"


def test_a_changed_slot_is_a_conflict_however_similar_the_rest() -> None:
    # 0.875 alike by bigrams, above the 0.85 "consistent" bar: the slot decides, not the score.
    fact = "当前最重要的事：Alice prefers dark mode in every editor"
    memories = [memory("当前最重要的事：Alice prefers light mode in every editor"),
                memory("当前最重要的事：Alice prefers dark mode in every  editor"),
                memory("Deploy freeze starts on December 18 for every team")]  # fmt: skip
    facts = memory_md_facts(f"- {fact}\n- Deploy freeze starts on December 19 for every team\n")
    findings = check(memories, facts, 0.85, 0.3)
    assert [f.verdict for f in findings] == ["conflict", "consistent", "conflict"]
    assert findings[0].similarity >= 0.85
    assert findings[2].why == "a different number or date"
