"""Decisions, in Chinese and in English, are knowledge: they reach RECENT.md's
最近决策/知识 section, through the store and through the journals alike."""

from __future__ import annotations

import pytest

from memfuse.settings import DEFAULT_EMOTION, DEFAULT_KNOWLEDGE
from memfuse.text.classify import Classifier
from tests.fakes import World

NOW = "2026-02-28T14:05:00+00:00"
DECISIONS = (
    "## 10:00\n- 决定下周一发布 2.5 版本\n- 最后选择了 Postgres 作为主库\n"
    "- 架构决策：缓存放在网关层\n- Decided to ship the billing service on Monday\n"
    "- We chose Redis over Memcached for the queue\n- Decision: freeze the API until March\n"
    "- Walked the dog in the park\n"
)


@pytest.mark.parametrize(
    ("text", "keyword"),
    [
        ("决定下周一发布", "决定"), ("架构决策已定", "决策"), ("最后选择了 Postgres", "选择"),
        ("Decided to ship", "Decided"), ("we chose Redis", "chose"),
        ("the decision stands", "decision"), ("we opted for rust", "opted"),
    ],
)  # fmt: skip
def test_a_decision_is_knowledge(text: str, keyword: str) -> None:
    verdict = Classifier(DEFAULT_KNOWLEDGE, DEFAULT_EMOTION).classify(text)
    assert (verdict.type, verdict.keyword) == ("knowledge", keyword)


def test_undecided_and_decisive_are_other_words() -> None:
    classify = Classifier(DEFAULT_KNOWLEDGE, DEFAULT_EMOTION).classify
    assert classify("still undecided about lunch").type == "event"
    assert classify("a decisive win").type == "event"


def recent_section(text: str) -> list[str]:
    part = text.split("## 最近决策/知识", 1)[1].split("\n## ", 1)[0]
    return [line for line in part.splitlines() if line.startswith("- ")]


def test_decisions_reach_recent_md_through_the_store(world: World) -> None:
    world.journal("2026-02-28", DECISIONS)
    assert world.json("sync", "--now", NOW).code == 0
    assert world.json("surface", "--now", NOW).code == 0
    section = " ".join(recent_section((world.workspace / "RECENT.md").read_text()))
    for said in ("决定下周一发布", "选择了 Postgres", "架构决策", "Decided to ship", "chose Redis",
                 "Decision: freeze"):  # fmt: skip
        assert said in section, section
    assert "Walked the dog" not in section


def test_decisions_reach_recent_md_from_the_journals_when_the_store_is_down(
    world: World,
) -> None:
    world.journal("2026-02-28", DECISIONS)
    world.gateway.down = "missing"
    world.json("surface", "--now", NOW)
    section = " ".join(recent_section((world.workspace / "RECENT.md").read_text()))
    assert "决定下周一发布" in section and "chose Redis" in section
