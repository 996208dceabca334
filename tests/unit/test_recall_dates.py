"""The dates a question names, as people say them (memfuse.recall.dates, issue 56): weekdays
alone and of last week in both languages, days counted back, and a day said by an event;
"today" is handed in."""

from __future__ import annotations

from datetime import date

import pytest

from memfuse.recall.dates import around, query_tokens

TODAY = date(2026, 11, 29)  # a Sunday: its Friday is the 27th, last week's Wednesday the 18th


@pytest.mark.parametrize(
    ("question", "day"),
    [
        ("周五面试的那个人怎么样", "20261127"),
        ("星期二开会说了什么", "20261124"),
        ("礼拜天去哪了", "20261122"),  # today is Sunday: a weekday alone is the last one before
        ("上周三的晚饭吃了什么", "20261118"),
        ("what did I do last Friday", "20261127"),
        ("what happened on Tuesday", "20261124"),
        ("how did Friday's interview go", "20261127"),
        ("前天买了什么", "20261127"),
        ("大前天见了谁", "20261126"),
        ("what did I cook the day before yesterday", "20261127"),
    ],
)
def test_a_day_said_as_people_say_it_is_that_day(question: str, day: str) -> None:
    assert query_tokens(question, TODAY) == [f"d{day}"]


@pytest.mark.parametrize(
    "question",
    [
        "以后每周三不开会吗",
        "周末去哪里玩",
        "下周五有什么安排",
        "一周一次的例会",
        "I swim on Tuesdays",
    ],
)
def test_a_habit_a_weekend_or_a_day_to_come_names_no_past_day(question: str) -> None:
    assert query_tokens(question, TODAY) == []


@pytest.mark.parametrize(
    ("question", "event", "shift"),
    [
        ("what did I decide the day after the outage?", "outage", 1),
        ("What did we fix the day before the launch, exactly", "launch", -1),
        ("停电的第二天我决定了什么", "停电", 1),
        ("搬家前一天做了什么", "搬家", -1),
    ],
)
def test_a_day_said_by_an_event_is_read_with_its_event(
    question: str, event: str, shift: int
) -> None:
    said = around(question)
    assert said is not None and said[:2] == (event, shift) and event in said[2] in question


def test_the_day_before_yesterday_is_a_day_not_an_event() -> None:
    assert around("what did I cook the day before yesterday") is None
    assert around("what did I cook on Friday") is None
