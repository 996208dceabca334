"""Daily times as the five fields of a cron expression, and back (every scheduler with a cron
expression reads them so: a line per minute, its hours as a list)."""

from __future__ import annotations

import re


def cron_times(times: tuple[tuple[int, int], ...]) -> list[str]:
    """The five time fields for daily times: one line per minute, its hours as a list."""
    by_minute: dict[int, list[int]] = {}
    for hour, minute in sorted(times):
        by_minute.setdefault(minute, []).append(hour)
    return [f"{m} {','.join(map(str, hours))} * * *" for m, hours in sorted(by_minute.items())]


def daily_times(
    minute: str, hour: str, day: str = "*", month: str = "*", weekday: str = "*"
) -> tuple[tuple[int, int], ...]:
    """The (hour, minute) pairs of a daily schedule; () when it is not every day."""
    if (day, month, weekday) != ("*", "*", "*"):
        return ()
    minutes, hours = _field(minute, 59), _field(hour, 23)
    if minutes is None or hours is None:
        return ()
    return tuple(sorted((h, m) for h in hours for m in minutes))


def _field(text: str, top: int) -> set[int] | None:
    found: set[int] = set()
    for item in text.split(","):
        span, slash, step_text = item.partition("/")
        if slash and not (step_text.isdigit() and int(step_text) > 0):
            return None
        step = int(step_text) if slash else 1
        if span == "*":
            low, high = 0, top
        elif re.fullmatch(r"\d+", span):
            low = high = int(span)
            if slash:  # "5/10": from 5 to the end, every 10
                high = top
        elif re.fullmatch(r"\d+-\d+", span):
            low, high = map(int, span.split("-"))
        else:
            return None
        if not 0 <= low <= high <= top:
            return None
        found.update(range(low, high + 1, step))
    return found
