"""Whether `memfuse rollback` has sync paused, and since when: one small file in the state
folder, kept apart from the ledger so that a ledger lost or set aside cannot undo a rollback."""

from __future__ import annotations

from datetime import datetime

from memfuse.confine import UnsafePath
from memfuse.state.folder import StateFolder


def paused_since(state: StateFolder) -> str | None:
    """Since when `memfuse rollback` has sync paused, from the file kept apart from the ledger
    (so that a ledger lost or set aside cannot undo it); None when sync is not paused."""
    try:
        raw = state.read(state.PAUSED, 64)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnsafePath):
        return "an unknown time (its record cannot be read)"
    text = raw.decode("ascii", errors="replace").strip()
    try:
        return datetime.fromisoformat(text).isoformat(timespec="seconds")
    except ValueError:
        return "an unknown time (its record is not a date)"


def set_paused(state: StateFolder, since: str | None) -> None:
    """Record the pause (None: lift it), atomically. A text that is not a date is kept all
    the same (the pause holds, since an unknown time): lifting it is a person's decision."""
    if since is None:
        state.remove(state.PAUSED)
    else:
        state.write(state.PAUSED, since.encode("ascii", errors="replace")[:64])
