"""Store answers are validated once (memfuse.store.answers): odd fields never raise."""

from __future__ import annotations

from datetime import UTC, datetime

from memfuse.store.answers import memories_in, memory_from


def test_a_well_formed_memory_keeps_every_field() -> None:
    m = memory_from(
        {"id": "m1", "content": "x", "type": "event", "uri": "event://journal/2026-11-29#0900-1",
         "priority": 3, "vitality": 0.5, "score": 1.25, "updated_at": "2026-11-29T09:00:00Z"},
        UTC,
    )  # fmt: skip
    assert m is not None
    assert (m.id, m.type, m.priority, m.vitality, m.score) == ("m1", "event", 3, 0.5, 1.25)
    assert m.updated_at == datetime(2026, 11, 29, 9, tzinfo=UTC)


def test_fields_of_the_wrong_type_are_absent_not_an_error() -> None:
    m = memory_from(
        {"content": "x", "id": 7, "type": "secret", "uri": "weird://a", "priority": "high",
         "vitality": True, "score": float("nan"), "updated_at": "yesterday"},
        UTC,
    )  # fmt: skip
    assert m is not None
    assert (m.id, m.priority, m.vitality, m.score, m.updated_at) == (None, None, None, None, None)
    assert m.type == "knowledge"  # what agent-memory's remember makes of a memory given none


def test_the_type_falls_back_to_the_uri_scheme_and_naive_times_take_the_runs_zone() -> None:
    m = memory_from({"content": "x", "uri": "knowledge://a", "created_at": "2026-11-29T09:00"}, UTC)
    assert m is not None and m.type == "knowledge"
    assert m.updated_at is not None and m.updated_at.tzinfo is UTC


def test_only_memories_with_text_survive() -> None:
    answer = {"memories": [{"content": "kept"}, {"content": 3}, "text", None, {"id": "x"}]}
    assert [m.content for m in memories_in(answer, UTC)] == ["kept"]
    assert memories_in({"memories": "none"}, UTC) is None  # not a listing: no answer
    assert memories_in({"found": False}, UTC) == []  # a prefix the store does not hold
    assert memories_in(None, UTC) is None
