"""A note of which agent-memory generation `doctor` last saw, for `memfuse status`."""

from __future__ import annotations

import json
from datetime import datetime

from memfuse.confine import UnsafePath
from memfuse.state.folder import StateFolder
from memfuse.untrusted import load_json


def note_generation(state: StateFolder, generation: int, when: datetime) -> None:
    """Remember the generation `doctor` saw, and when."""
    data = json.dumps({"generation": generation, "seen": when.isoformat(timespec="seconds")})
    state.write(state.STORE_MEMO, data.encode())


def last_generation(state: StateFolder) -> tuple[int, str] | None:
    """(generation, when) as `doctor` last saw it, or None."""
    if not state.exists():
        return None
    try:
        value = load_json(state.read(state.STORE_MEMO, 4096), limit=4096)
        return int(value["generation"]), str(value["seen"])
    except (OSError, UnsafePath, ValueError, TypeError, KeyError):
        return None
