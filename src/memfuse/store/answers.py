"""A memory as the store's answers carry it, validated once: pure, shared by surface, recall
and rerank-test.

agent-memory's answers differ by tool and generation (`recall` has scores, `recall_path` has
URIs, some carry `updated_at`, others `created_at`), and a store or a proxy in front of it may
answer anything. Every field is checked here; a memory without text is dropped, a field of the
wrong type is absent, never an exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from dateutil import parser as date_parser

TYPES = frozenset({"identity", "emotion", "knowledge", "event"})


@dataclass(frozen=True)
class StoredMemory:
    content: str
    type: str | None  # one of TYPES, from the answer or else from the URI's scheme
    id: str | None = None
    uri: str | None = None
    priority: int | None = None
    vitality: float | None = None
    score: float | None = None
    updated_at: datetime | None = None  # updated_at, else created_at; naive means `tz`


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_time(value: Any, tz: tzinfo | None) -> datetime | None:
    """An ISO timestamp from an answer; naive ones are read in `tz`; None when unusable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = date_parser.isoparse(value)
    except (ValueError, OverflowError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=tz)


def memory_from(raw: Any, tz: tzinfo | None) -> StoredMemory | None:
    """One memory of an answer, validated; None for anything without text."""
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), str):
        return None
    uri = _text(raw.get("uri"))
    memory_type = raw.get("type") if raw.get("type") in TYPES else None
    if memory_type is None and uri is not None:
        scheme = uri.split("://", 1)[0]
        memory_type = scheme if scheme in TYPES else None
    priority = _number(raw.get("priority"))
    return StoredMemory(
        content=raw["content"],
        type=memory_type,
        id=_text(raw.get("id")),
        uri=uri,
        priority=int(priority) if priority is not None else None,
        vitality=_number(raw.get("vitality")),
        score=_number(raw.get("score")),
        updated_at=parse_time(raw.get("updated_at") or raw.get("created_at"), tz),
    )


def memories_in(answer: Any, tz: tzinfo | None) -> list[StoredMemory]:
    """Every usable memory of an answer's `memories` list (none when there is no list)."""
    memories = answer.get("memories") if isinstance(answer, dict) else None
    if not isinstance(memories, list):
        return []
    return [m for m in (memory_from(raw, tz) for raw in memories) if m is not None]
