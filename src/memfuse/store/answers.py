"""What agent-memory answers, read once into typed values: a memory, a remember's outcome, a
reflect report, the store's status. Pure.

Answers differ by tool and generation, and a store or a proxy in front of it may answer
anything. Every field is checked here; a memory without text is dropped, a field of the wrong
type is absent, never an exception.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

from dateutil import parser as date_parser

TYPES = frozenset({"identity", "emotion", "knowledge", "event"})
# A memory whose answer names no type (nor a URI scheme that is one) is what agent-memory's
# remember makes when it is given none: knowledge. One default, for every reader of memories.
UNTYPED = "knowledge"


@dataclass(frozen=True)
class StoredMemory:
    content: str
    type: str  # one of TYPES: from the answer, else the URI's scheme, else UNTYPED
    id: str | None = None
    uri: str | None = None
    priority: int | None = None
    vitality: float | None = None
    score: float | None = None
    updated_at: datetime | None = None  # updated_at, else created_at; naive means `tz`
    source: str | None = None


@dataclass(frozen=True)
class Outcome:
    """What a `remember` did: added, updated, merged, skipped (an exact duplicate, with the
    existing memory's id), rejected (the write gate, no id), or failed (no usable answer)."""

    action: str
    memory_id: str | None = None
    reason: str = ""
    unexpected: str | None = None  # an answer that was there but said none of the above


@dataclass(frozen=True)
class Reflection:
    """What reflect did: per-phase counts when the store gave them, else its prose; and the
    memory count before and after when its summary line says so."""

    counts: dict[str, Any] | None
    text: str | None
    totals: dict[str, int] | None = None

    @property
    def report(self) -> dict[str, Any] | str | None:
        return self.counts if self.counts is not None else self.text


@dataclass(frozen=True)
class StoreStatus:
    total: int | None
    by_type: dict[str, int] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)  # 5.x: per type and "total"


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
        type=memory_type or UNTYPED,
        id=_text(raw.get("id")),
        uri=uri,
        priority=int(priority) if priority is not None else None,
        vitality=_number(raw.get("vitality")),
        score=_number(raw.get("score")),
        updated_at=parse_time(raw.get("updated_at") or raw.get("created_at"), tz),
        source=_text(raw.get("source")),
    )


def memories_in(answer: Any, tz: tzinfo | None) -> list[StoredMemory] | None:
    """Every usable memory of an answer's `memories` list; None when there is no list (an
    answer that is not a listing); [] for a prefix the store says it does not hold."""
    if not isinstance(answer, dict):
        return None
    memories = answer.get("memories")
    if not isinstance(memories, list):
        return [] if answer.get("found") is False else None
    return [m for m in (memory_from(raw, tz) for raw in memories) if m is not None]


def outcome_of(answer: Mapping[str, Any]) -> Outcome:
    """A remember answer read as its outcome."""
    action = answer.get("action")
    memory_id = _text(answer.get("memoryId"))
    reason = str(answer.get("reason", ""))
    if action in ("added", "updated", "merged"):
        return Outcome(str(action), memory_id, reason)
    if action == "skipped":
        # An exact duplicate names the memory it duplicates; the write gate names none.
        return Outcome("skipped" if memory_id else "rejected", memory_id, reason)
    unexpected = f"unexpected remember answer {dict(answer)}"
    return Outcome("failed", reason=unexpected, unexpected=unexpected)


def status_of(answer: Mapping[str, Any]) -> StoreStatus:
    """A status answer: the totals, and 5.x's capacity limits per type."""
    by_type = answer.get("by_type")
    limits: dict[str, int] = {}
    capacity = answer.get("capacity")
    if isinstance(capacity, dict):
        for name, entry in capacity.items():
            limit = _count(entry.get("limit")) if isinstance(entry, dict) else None
            if limit is not None:
                limits[str(name)] = limit
    return StoreStatus(
        total=_count(answer.get("total")),
        by_type={str(k): v for k, v in by_type.items() if _count(v) is not None}
        if isinstance(by_type, dict)
        else {},
        limits=limits,
    )


_PHASE_HEADING = re.compile(r"^###\s+(decay|tidy|govern)\s*$", re.MULTILINE)
_TOTALS = re.compile(r"记忆总数[：:]\s*(\d+)\s*→\s*(\d+)")


def reflection_of(value: Any, text: str) -> Reflection:
    """A reflect answer: 2.x's JSON counts, 4.x/5.x's per-phase JSON under Markdown headings,
    or 3.x's prose (kept as text)."""
    if isinstance(value, dict):
        return Reflection(value, None)
    prose = text.strip()
    counts = reflect_counts(prose)
    return Reflection(counts, prose, reflect_totals(prose) if counts is None else None)


def reflect_counts(text: str) -> dict[str, Any] | None:
    """The per-phase counts of a 4.x/5.x reflect answer, in 2.2's `{phase: {key: n}}` shape;
    None when the text has no phase with a JSON object (3.x's prose, or something else)."""
    decoder = json.JSONDecoder()
    found: dict[str, Any] = {}
    for heading in _PHASE_HEADING.finditer(text):
        rest = text[heading.end() :].lstrip()
        try:
            value, _end = decoder.raw_decode(rest)
        except ValueError:
            continue
        if isinstance(value, dict):
            found[heading.group(1)] = value
    return found or None


def reflect_totals(text: str) -> dict[str, int] | None:
    """The memory count before and after, from the summary line 3.x–5.x end reflect with."""
    match = _TOTALS.search(text)
    if match is None:
        return None
    return {"before": int(match.group(1)), "after": int(match.group(2))}
