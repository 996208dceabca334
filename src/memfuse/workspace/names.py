"""The names of the workspace's journals: which file names a day, and which only looks as if
it did (SPEC §3). Pure: no file is opened here."""

from __future__ import annotations

import re
import unicodedata
from datetime import date, timedelta

# Only ASCII digits and a real date name a journal (SPEC §3): `\d` would take other scripts'
# digits, and `$` a name ending in a newline.
JOURNAL_NAME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\.md")


# The days a journal may be for. A journal dated far from any agent's life (`0001-01-01`,
# `9999-12-31`) is named and skipped: every window, week and neighbour memfuse computes from a
# day then stays a real date.
FIRST_DAY, LAST_DAY = date(1900, 1, 1), date(2999, 12, 31)

# What a person would take for a journal's name (other scripts' digits, full-width forms,
# `.MD`, an impossible date): never a journal; always reported.
LOOSE_NAME = re.compile(r"\d{4}-\d{2}-\d{2}\.md", re.IGNORECASE)


def looks_like_journal(name: str) -> bool:
    """A name that is not a journal's but reads like one (and could hide a real one)."""
    loose = unicodedata.normalize("NFKC", name).strip()
    return LOOSE_NAME.fullmatch(loose) is not None and name_date(name) is None


def name_date(name: str) -> date | None:
    """The date a journal's file name (`YYYY-MM-DD.md`) gives, or None for any other name."""
    match = JOURNAL_NAME.fullmatch(name)
    if match is None:
        return None
    try:
        day = date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None
    return day if FIRST_DAY <= day <= LAST_DAY else None


def monday_of(day: date) -> date:
    return day - timedelta(days=day.weekday())


# The forms a day's journal takes, in the order memfuse reads them: the daily itself, the daily
# moved to memory/archive/ by `tidy --archive`, the day's section of its weekly roll-up.
DAILY, ARCHIVED, WEEKLY = "daily", "archived", "weekly"
# An archived daily: the day's first (`YYYY-MM-DD.md`) or a late one archived after it
# (`YYYY-MM-DD.1.md`); a zero-padded or zero number (`.01.md`, `.0.md`) is a look-alike.
ARCHIVED_NAME = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})(?:\.([1-9][0-9]*))?\.md")
NUMBERED_NAME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\.[0-9]+\.md")
