"""agent-memory's Ebbinghaus decay model and its recall weighting (docs/reference.md),
shared by memfuse (surface's vitality estimate, recall's local weighting) and the reference
server (`reflect phase=decay`, `recall`'s ranking)."""

from __future__ import annotations

import math

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


PRIORITY_BOOST = (4.0, 3.0, 2.0, 1.0)  # identity, emotion, knowledge, event


def weighted(
    score: float, priority: int, vitality_now: float, age_days: float | None, intent: str
) -> float:
    """agent-memory's final recall score: score × max(0.1, vitality), then × recency for a
    temporal query (max(0.1, 1/(1 + 0.1·days since the last update)), when known) or × the
    priority boost for any other."""
    value = score * max(0.1, vitality_now)
    if intent == "temporal":
        if age_days is not None:
            value *= max(0.1, 1 / (1 + 0.1 * max(age_days, 0.0)))
    else:
        value *= PRIORITY_BOOST[min(max(priority, 0), 3)]
    return value
