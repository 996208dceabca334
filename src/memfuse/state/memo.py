"""A note of which agent-memory generation `doctor` last saw, for `memfuse status`."""

from __future__ import annotations

import json
from datetime import datetime

from memfuse.confine import UnsafePath, read_private, write_private
from memfuse.state.folder import StateFolder


def note_generation(state: StateFolder, generation: int, when: datetime) -> None:
    """Remember the generation `doctor` saw, and when."""
    data = json.dumps({"generation": generation, "seen": when.isoformat(timespec="seconds")})
    write_private(state.store_memo, data.encode())


def last_generation(state: StateFolder) -> tuple[int, str] | None:
    """(generation, when) as `doctor` last saw it, or None."""
    try:
        value = json.loads(read_private(state.store_memo, 4096))
        return int(value["generation"]), str(value["seen"])
    except (OSError, UnsafePath, ValueError, TypeError, KeyError):
        return None
