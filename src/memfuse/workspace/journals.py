"""Where journals live in a workspace, and which files count as journals."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from pathlib import Path

from memfuse.workspace.confine import UnsafePath, WorkspaceFiles
from memfuse.workspace.journal import ParsedJournal, parse_bytes

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
    """Every entry named like a daily journal directly under memory/, by date.

    Whatever the entry is (a FIFO, a link, a folder) it is listed: reading it through
    `read_journal` is what refuses it, with a warning, instead of skipping it in silence.
    """
    folder = journal_dir(workspace)
    if not folder.is_dir():
        return {}
    found = {}
    for path in folder.iterdir():
        day = journal_date(path)
        if day is not None:
            found[day] = path
    return dict(sorted(found.items()))


def read_journal(
    files: WorkspaceFiles, path: Path, warn: Callable[[str], None]
) -> ParsedJournal | None:
    """A journal parsed, or None after one warning when it cannot or may not be read.

    A missing file raises FileNotFoundError: whether that is worth a word is the caller's call.
    """
    try:
        raw = files.read(path)
    except UnsafePath as exc:
        warn(f"{exc}; skipped")
        return None
    except FileNotFoundError:
        raise
    except OSError as exc:
        warn(f"cannot read {path}: {exc.strerror or exc}; skipped")
        return None
    parsed = parse_bytes(raw)
    if parsed.replaced_bytes:
        warn(f"{path} is not valid UTF-8; unreadable bytes were replaced by \ufffd")
    return parsed
