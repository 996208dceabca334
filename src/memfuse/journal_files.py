"""Where journals live in a workspace, and which files count as journals."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

JOURNAL_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")


def journal_date(path: Path) -> date | None:
    """The date a journal's file name gives, or None for any other file."""
    match = JOURNAL_NAME.match(path.name)
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def journal_dir(workspace: Path) -> Path:
    return workspace / "memory"


def journal_path(workspace: Path, day: date) -> Path:
    return journal_dir(workspace) / f"{day.isoformat()}.md"


def list_journals(workspace: Path) -> dict[date, Path]:
    """Every daily journal directly under memory/, by date (weekly/ and archive/ excluded)."""
    folder = journal_dir(workspace)
    if not folder.is_dir():
        return {}
    found = {}
    for path in folder.iterdir():
        day = journal_date(path)
        if day is not None and path.is_file():
            found[day] = path
    return dict(sorted(found.items()))
