"""agent-memory's Ebbinghaus decay model (reference/agent-memory-2.2.md), shared by `surface`
(to estimate missing vitality) and the reference server (to apply `reflect phase=decay`)."""

from __future__ import annotations

import math

TYPES = ("identity", "emotion", "knowledge", "event")
PRIORITY = {"identity": 0, "emotion": 1, "knowledge": 2, "event": 3}
STABILITY_DAYS = {0: math.inf, 1: 365.0, 2: 90.0, 3: 14.0}
FLOOR = {0: 1.0, 1: 0.3, 2: 0.1, 3: 0.0}


def priority_of(memory_type: str) -> int:
    """The priority a type fixes; unknown types decay like events."""
    return PRIORITY.get(memory_type, 3)


def vitality(priority: int, age_days: float, stability: float | None = None) -> float:
    """max(floor, e^(−t/S)) with t the days since last access (or creation)."""
    s = STABILITY_DAYS.get(priority, 14.0) if stability is None else stability
    floor = FLOOR.get(priority, 0.0)
    if math.isinf(s):
        return 1.0
    return max(floor, math.exp(-max(age_days, 0.0) / s))
