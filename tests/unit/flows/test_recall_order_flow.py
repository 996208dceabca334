"""`memfuse recall`'s order for what issue 56 found wrong, by the words alone and with meaning:
a weekday said alone and a day said by an event find that day's bullets first; MEMORY.md's
header is not a fact and never ranks above one."""

from __future__ import annotations

import pytest

from tests.fakes import FakeEmbedder, World

NOW = "2026-11-29T22:00"  # a Sunday: its Friday is the 27th, its Tuesday the 24th

INTERVIEWS = {
    "2026-11-24": "## 10:00\n- 面试了一个人，不合适\n- 中午和同事吃了拉面\n",
    "2026-11-27": "## 15:00\n- 下午面试了后端候选人，沟通很好，安排复试\n- 修好了打印机\n",
}
OUTAGE = {
    "2026-11-24": "## 10:00\n- The payments outage lasted two hours; a certificate had expired\n"
    "- Lunch with Sam at the noodle bar\n",
    "2026-11-25": "## 09:00\n- Decided to renew every certificate by a scheduled job each month\n",
    "2026-11-26": "## 09:00\n- Decided to move the offsite\n",
}
BLACKOUT = {
    "2026-11-24": "## 20:00\n- 小区停电了一整晚，冰箱里的东西都化了\n",
    "2026-11-25": "## 09:00\n- 决定买一台备用电源放在家里以防万一\n",
    "2026-11-26": "## 09:00\n- 决定换冰箱\n",
}


# Other days, so that a day's token is as rare in the index as in a journal of weeks.
OTHER_DAYS = {
    f"2026-11-{n}": f"## 09:00\n- {a}\n- {b}\n"
    for n, a, b in (
        (16, "Paid the electricity bill online", "给阳台上的花浇了水"),
        (17, "Walked the dog in the park at noon", "整理了书架上的旧杂志"),
        (18, "Backed up the laptop to the external drive", "去超市买了水果和牛奶"),
        (19, "Sorted the recycling", "晚饭后散步半小时"),
        (20, "Ordered a new desk lamp", "学了二十分钟吉他"),
    )
}


def first(world: World, journals: dict[str, str], question: str, *, meaning: bool) -> str:
    for day, text in {**OTHER_DAYS, **journals}.items():
        world.journal(day, text)
    world.embedder = FakeEmbedder() if meaning else None
    out = world.json("recall", question, "--now", NOW, "--without", "store")
    assert out.code == 0, out.stdout
    return str(out.data["results"][0]["location"])


@pytest.mark.parametrize("meaning", [False, True])
@pytest.mark.parametrize(
    ("journals", "question", "answer"),
    [
        (INTERVIEWS, "周五面试的那个人怎么样", "memory/2026-11-27.md:2"),
        (INTERVIEWS, "星期二面试的那个人怎么样", "memory/2026-11-24.md:2"),
        (OUTAGE, "what did I decide the day after the outage?", "memory/2026-11-25.md:2"),
        (BLACKOUT, "停电的第二天我决定了什么", "memory/2026-11-25.md:2"),
    ],
)
def test_the_day_a_question_names_comes_first(
    world: World, journals: dict[str, str], question: str, answer: str, *, meaning: bool
) -> None:
    assert first(world, journals, question, meaning=meaning) == answer


MEMORY_MD = """# MEMORY.md

Long-term memory, curated by hand.

## People
- Omar is the on-call database engineer.

## Preferences
- I prefer window seats on long flights.
"""


@pytest.mark.parametrize("meaning", [False, True])
def test_memory_mds_header_never_outranks_a_fact(world: World, *, meaning: bool) -> None:
    (world.workspace / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    world.embedder = FakeEmbedder() if meaning else None
    world.journal("2026-11-27", "## 09:00\n- Sketched the long-term roadmap by hand\n")
    out = world.json("recall", "what is curated in long-term memory?", "--now", NOW)
    assert out.code == 0, out.stdout
    found = [r["content"] for r in out.data["results"]]
    assert found[0] == "Sketched the long-term roadmap by hand"
    assert "Long-term memory, curated by hand." not in found
    facts = world.json("recall", "which seats do I prefer on flights?", "--now", NOW)
    assert facts.data["results"][0]["location"] == "MEMORY.md:9"
