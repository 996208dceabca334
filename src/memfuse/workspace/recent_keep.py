"""Keeping the lines of RECENT.md memfuse did not write, before surface rewrites it.

RECENT.md is memfuse's file, but a person or the agent may write into it. Which lines are
memfuse's is known from its own record of what it wrote last, in the state folder — never from
a mark in the file, which the agent could forge (but the template's own time line, known by its
exact form: recent_md.STAMPED). The others are copied beside RECENT.md
(RECENT.kept.md: bounded, written atomically through the workspace's confined file access),
or into the state folder when that copy is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memfuse.errors import WorkspaceError
from memfuse.state.folder import StateFolder
from memfuse.workspace.layout import Workspace
from memfuse.workspace.recent_md import KEPT_MAX, foreign_lines, kept_text


@dataclass(frozen=True)
class Kept:
    """The lines kept this run: how many, and where."""

    count: int
    copy: Path


def keep_foreign(
    workspace: Workspace, path: Path, text: str, now: datetime, warn: Callable[[str], None]
) -> Kept | None:
    """Copy the lines of RECENT.md memfuse did not write — a person's, the agent's — beside it
    (RECENT.kept.md) before it is replaced; in the state folder when that copy cannot be
    written there (a link, a folder in its place). None when there are none. WorkspaceError
    when they can be kept nowhere, or RECENT.md cannot be read whole (a link, a folder, past
    the read limit): RECENT.md is then left as it is, never written over unread."""
    try:
        current = workspace.files.read(path, own=True).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except (OSError, WorkspaceError) as exc:
        raise WorkspaceError(
            f"{exc}; RECENT.md is not rewritten (memfuse never writes over what it could not"
            " read whole): it and anything it links to are untouched"
        ) from None
    state = workspace.state
    try:
        written: str | None = state.read(state.RECENT_WRITTEN, KEPT_MAX).decode("utf-8", "replace")
    except (OSError, WorkspaceError):
        written = None  # no record: every line not written now is kept
    lines = foreign_lines(current, written, text)
    if not lines:
        return None
    copy = workspace.recent_kept
    try:
        try:
            existing = workspace.files.read(copy, own=True).decode("utf-8", errors="replace")
        except FileNotFoundError:
            existing = ""
        new, dropped = kept_text(existing, lines, now)
        workspace.files.write(copy, new.encode("utf-8"))
    except (OSError, WorkspaceError) as exc:  # it cannot be read, or written
        warn(f"the lines not written by memfuse cannot be kept in {copy}: {exc}")
        try:
            old = state.read(state.RECENT_KEPT, KEPT_MAX * 2).decode("utf-8", "replace")
        except (OSError, WorkspaceError):
            old = ""
        new, dropped = kept_text(old, lines, now)
        copy = state.path / state.RECENT_KEPT
        try:
            state.write(state.RECENT_KEPT, new.encode("utf-8"))
        except (OSError, WorkspaceError) as again:
            raise WorkspaceError(
                f"{path} holds {len(lines)} line(s) memfuse did not write, and they cannot be"
                f" kept ({again}): RECENT.md is not rewritten"
            ) from None
    if dropped:
        warn(f"{copy} is over {KEPT_MAX // 1024} KiB: its {dropped} oldest line(s) were dropped")
    warn(f"{len(lines)} line(s) of RECENT.md memfuse did not write are kept in {copy}")
    return Kept(len(lines), copy)


def note_written(state: StateFolder, text: str, warn: Callable[[str], None]) -> None:
    """What memfuse wrote into RECENT.md, in its own state folder: the next surface keeps any
    line that is not in it."""
    try:
        state.write(state.RECENT_WRITTEN, text.encode("utf-8"))
    except (OSError, WorkspaceError) as exc:
        warn(f"cannot record what RECENT.md was written with: {exc}")
