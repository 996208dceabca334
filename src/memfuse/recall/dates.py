"""Dates in a question, matched against the journal's date.

Every bullet of a journal is indexed with its day's tokens (`d20230508 m202305 mm05 y2023`).
A question gets the tokens of the dates it names: absolute (`8 May, 2023`, `May 8, 2023`,
`2023-05-08` → that day; `May 2023` → that month; `in May` → that month of any year; `2023` →
that year) and, since a run knows its own clock, relative (`yesterday`, `3 days ago`,
`last Saturday`, `on Friday`, `last week`, `last month`, `昨天`, `前天`, `大前天`, `上周`,
`上周六`, `周五`, `上个月`); a weekday named alone is its last one before today. A day said by
an event (`the day after the outage`, `停电的第二天`) is that event's day in the journals, moved
by one (`around`: the caller finds the event). Matched by BM25 like any term, a day (rare)
weighs more than a month, a month more than a year.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_MONTH_NAMES = (
    "january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul",
    "august aug", "september sep sept", "october oct", "november nov", "december dec",
)  # fmt: skip
_MONTHS = {name: n for n, names in enumerate(_MONTH_NAMES, start=1) for name in names.split()}
_MON = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON},?\s*(\d{{4}})?\b", re.I)
_MONTH_DAY = re.compile(rf"\b{_MON}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b,?\s*(\d{{4}})?", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MON},?\s+(\d{{4}})\b", re.I)
_IN_MONTH = re.compile(rf"\b(?:in|during|since|of|early|late|mid)\s+{_MON}(?![\w-])", re.I)
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")

_WEEKDAYS = {name: n for n, names in enumerate(
    ("monday mon", "tuesday tue tues", "wednesday wed", "thursday thu thurs", "friday fri",
     "saturday sat", "sunday sun")) for name in names.split()}  # fmt: skip
_LAST_WEEKDAY = re.compile(
    r"\b(?:(?:last|on|this past)\s+(" + "|".join(_WEEKDAYS) + r")|(" + "|".join(
        n for n in _WEEKDAYS if len(n) > 4) + r"))\b", re.I)  # fmt: skip
_DAYS_AGO = re.compile(r"\b(\d{1,3})\s+days?\s+ago\b", re.I)
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_WEEKDAY_NAMED = re.compile(
    r"(?<![一二三四五六七八九十两几\d])(上|下|每)?(?:周|星期|礼拜)([一二三四五六日天])"
)
# A day said by an event: "the day after the outage", "停电的第二天" (the event, its shift).
_AROUND = (
    re.compile(r"\bthe day (after|before) (?!yesterday|today|tomorrow)(?:the |my |our |that )?"
               r"(.{3,80}?)\s*(?:[?.!,;]|$)", re.I),
    re.compile(r"([^\s，。？！,.?!]{2,16}?)的?(第二天|次日|后一天|前一天|头一天)"),
)  # fmt: skip
_SHIFT = {"after": 1, "before": -1, "第二天": 1, "次日": 1, "后一天": 1, "前一天": -1, "头一天": -1}
_RELATIVE = (
    (re.compile(r"大前天"), lambda today: [today - timedelta(3)]),
    (re.compile(r"\bthe day before yesterday\b|前天", re.I), lambda today: [today - timedelta(2)]),
    (re.compile(r"\byesterday\b|昨天|昨日", re.I), lambda today: [today - timedelta(1)]),
    (re.compile(r"\btoday\b|今天|今日", re.I), lambda today: [today]),
    (re.compile(r"\blast week\b|上周(?![一二三四五六日天])|上星期(?![一二三四五六日天])", re.I),
     lambda today: _week(today - timedelta(7))),
    (re.compile(r"\bthis week\b|这周|本周|这星期", re.I),
     lambda today: _week(today)[: today.weekday() + 1]),
)  # fmt: skip


def doc_tokens(day: date) -> list[str]:
    """The tokens a bullet of this day's journal is indexed with."""
    return [f"d{day:%Y%m%d}", f"m{day:%Y%m}", f"mm{day:%m}", f"y{day:%Y}"]


def query_tokens(question: str, today: date) -> list[str]:
    """The tokens of every date the question names (absolute, or relative to `today`)."""
    found: list[str] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= a or span[0] >= b for a, b in taken)

    def take(match: re.Match[str], tokens: list[str]) -> None:
        if free(match.span()):
            found.extend(tokens)
            taken.append(match.span())

    for m in _ISO.finditer(question):
        take(m, _day(int(m[1]), int(m[2]), int(m[3])))
    for m in _DAY_MONTH.finditer(question):
        if m[3] or m[2].lower() != "may":  # "8 may" without a year is a verb as often as not
            take(m, _named(int(m[1]), _MONTHS[m[2].lower()], m[3]))
    for m in _MONTH_DAY.finditer(question):
        if m[3] or m[1].lower() != "may":
            take(m, _named(int(m[2]), _MONTHS[m[1].lower()], m[3]))
    for m in _MONTH_YEAR.finditer(question):
        take(m, [f"m{int(m[2]):04d}{_MONTHS[m[1].lower()]:02d}"])
    for m in _IN_MONTH.finditer(question):
        take(m, [f"mm{_MONTHS[m[1].lower()]:02d}"])
    for pattern, days in _RELATIVE:
        for m in pattern.finditer(question):
            take(m, [f"d{d:%Y%m%d}" for d in days(today)])
    for m in _DAYS_AGO.finditer(question):
        take(m, [f"d{today - timedelta(int(m[1])):%Y%m%d}"])
    for m in _LAST_WEEKDAY.finditer(question):
        back = (today.weekday() - _WEEKDAYS[(m[1] or m[2]).lower()]) % 7 or 7
        take(m, [f"d{today - timedelta(back):%Y%m%d}"])
    for m in _ZH_WEEKDAY_NAMED.finditer(question):
        weekday = _ZH_WEEKDAY[m[2]]
        if m[1] == "上":  # last week's
            take(m, [f"d{today - timedelta(today.weekday() + 7 - weekday):%Y%m%d}"])
        elif m[1] is None:  # alone: the last one before today
            take(m, [f"d{today - timedelta((today.weekday() - weekday) % 7 or 7):%Y%m%d}"])
    if re.search(r"\blast month\b|上个月|上月", question, re.I):
        first = today.replace(day=1) - timedelta(days=1)
        found.append(f"m{first:%Y%m}")
    if re.search(r"\bthis month\b|这个月|本月", question, re.I):
        found.append(f"m{today:%Y%m}")
    for m in _YEAR.finditer(question):
        if free(m.span()):
            found.append(f"y{m[1]}")
    return list(dict.fromkeys(found))


def around(question: str) -> tuple[str, int, str] | None:
    """The event a question dates its day by, the days from it and the words that say so
    (`the day after the outage`: ("outage", 1, "the day after the outage")); None when it
    names none."""
    for pattern in _AROUND:
        if m := pattern.search(question):
            after, event = (m[1], m[2]) if m[1].lower() in _SHIFT else (m[2], m[1])
            return event, _SHIFT[after.lower()], m[0]
    return None


def _week(day: date) -> list[date]:
    monday = day - timedelta(days=day.weekday())
    return [monday + timedelta(days=n) for n in range(7)]


def _day(year: int, month: int, day: int) -> list[str]:
    try:
        return [f"d{date(year, month, day):%Y%m%d}"]
    except ValueError:
        return []


def _named(day: int, month: int, year: str | None) -> list[str]:
    """A day named with its month: that day when a year is given, else that month (of any
    year) — a question about "May 8" may mean any May."""
    if year:
        return _day(int(year), month, day)
    return [f"mm{month:02d}"]
