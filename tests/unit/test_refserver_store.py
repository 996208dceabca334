"""The reference server's store follows agent-memory 2.2's observed semantics."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memfuse.refserver.store import Store
from memfuse.refserver.tools import call_tool

T0 = datetime(2026, 2, 21, 22, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db(tmp_path: Path, clock: Clock) -> Store:
    return Store(str(tmp_path / "m.db"), "default", clock)


def test_same_content_twice_is_skipped_with_the_first_id(db: Store) -> None:
    first = db.remember(
        "Deployed the billing service to prod", "event", "event://journal/2026-02-21#2200-1"
    )
    again = db.remember("  Deployed the billing service to prod ", "event", "event://journal/x#1")
    assert first["action"] == "added"
    assert again == {
        "action": "skipped",
        "reason": "Exact duplicate (hash match)",
        "memoryId": first["memoryId"],
    }
    assert db.recall_path("event://journal/x#1") == {"found": False, "uri": "event://journal/x#1"}


def test_same_uri_with_new_content_updates_and_keeps_type(db: Store) -> None:
    uri = "event://journal/2026-02-21#2200-1"
    first = db.remember("Reviewed the quarterly roadmap draft", "event", uri)
    second = db.remember("我喜欢深色模式 and Alice approved", "knowledge", uri)
    assert second["action"] == "updated"
    assert second["memoryId"] == first["memoryId"]
    memory = db.recall_path(uri)["memory"]
    assert memory["content"] == "我喜欢深色模式 and Alice approved"
    assert memory["type"] == "event"


def test_gate_rejects_short_text_without_an_id(db: Store) -> None:
    answer = db.remember("abc", "event")
    assert answer["action"] == "skipped"
    assert "memoryId" not in answer
    assert answer["reason"].startswith("Gate rejected: specificity (too short: 3 < 8 chars)")


def test_gate_rejects_text_with_no_meaningful_token(db: Store) -> None:
    answer = db.remember('{"a": 1, "b": [2]}', "event")
    assert "novelty" in answer["reason"]


def test_identity_uri_domain_gets_no_path(db: Store) -> None:
    db.remember("User name is Alice, timezone US/Pacific", "identity", "identity://core/name")
    assert db.recall_path("identity://core/name")["found"] is False
    assert db.status()["paths"] == 0


def test_prefix_listing_has_uri_content_type_priority_only(db: Store) -> None:
    db.remember(
        "Shipped release 1.4 to the beta ring", "event", "event://journal/2026-02-21#2200-1"
    )
    db.remember(
        "Paired with Bob on the flaky login test", "event", "event://journal/2026-02-21#2200-2"
    )
    listing = db.recall_path("event://journal/")
    assert listing["count"] == 2
    assert set(listing["memories"][0]) == {"uri", "content", "type", "priority"}
    assert [m["uri"] for m in listing["memories"]] == sorted(m["uri"] for m in listing["memories"])


def test_prefix_treats_like_wildcards_literally(db: Store) -> None:
    db.remember(
        "Shipped release 1.4 to the beta ring", "event", "event://journal/2026-02-21#2200-1"
    )
    assert db.recall_path("event://%")["found"] is False


def test_reflect_decays_and_tidies_old_events(db: Store, clock: Clock) -> None:
    db.remember("Fixed the nightly backup cron job", "event", "event://journal/2026-01-01#0900-1")
    db.remember(
        "Alice prefers short status reports", "knowledge", "knowledge://journal/2026-01-01#0900-2"
    )
    clock.now = T0 + timedelta(days=60)
    report = db.reflect("all")
    assert set(report) == {"decay", "tidy", "govern"}
    assert report["decay"]["decayed"] == 2
    assert report["tidy"]["archived"] == 1
    assert db.status()["by_type"] == {"knowledge": 1}


def test_recall_boosts_what_it_returns(db: Store) -> None:
    db.remember("Alice prefers short status reports", "knowledge")
    before = db.recall("status reports")["memories"][0]
    assert before["vitality"] == 1.0
    row = db.db.execute("SELECT access_count, stability FROM memories").fetchone()
    assert row["access_count"] == 1
    assert row["stability"] == 135.0


def test_forget_soft_then_hard_then_unknown(db: Store) -> None:
    memory_id = db.remember("Alice prefers short status reports", "knowledge")["memoryId"]
    assert db.forget(memory_id) == {"action": "decayed", "id": memory_id, "new_vitality": 0.1}
    assert db.forget(memory_id, hard=True) == {"action": "deleted", "id": memory_id}
    result = call_tool(db, "forget", {"id": memory_id})
    assert result["content"][0]["text"] == '{"error": "Memory not found"}'
    assert "isError" not in result


def test_schema_violation_is_an_mcp_error_and_extras_are_dropped(db: Store) -> None:
    bad = call_tool(db, "remember", {"content": "Valid enough content here", "type": "mood"})
    assert bad["isError"] is True
    assert bad["content"][0]["text"].startswith("MCP error -32602: Input validation error")
    ok = call_tool(db, "recall_path", {"uri": "event://", "limit": 5, "path": "x"})
    assert "isError" not in ok


@pytest.mark.parametrize("generation", [4, 5])
def test_4x_and_5x_merge_a_near_duplicate_and_bind_its_uri_as_the_reference_says(
    tmp_path: Path, clock: Clock, generation: int
) -> None:
    """agent-memory-versions.md: a semantic near-duplicate is `merged` into the existing
    memory, whose text becomes `old；new`, and the merged write's URI reaches that memory; an
    exact duplicate is `skipped` with the existing id and its URI is not created; a write at
    a bound URI rewrites the whole memory ("updating canonical content")."""
    store = Store(str(tmp_path / "g.db"), "default", clock, generation=generation)
    one, two, three = (f"knowledge://journal/2026-11-2{d}#0000-1" for d in (7, 8, 9))
    old = "Maria prefers the weekly sync meeting on Tuesday mornings at nine"
    new = f"{old} sharp"
    made = store.remember(old, "knowledge", one)
    merged = store.remember(new, "knowledge", two)
    assert merged["action"] == "merged" and merged["memoryId"] == made["memoryId"]
    assert merged["reason"].startswith("Semantic near-duplicate detected (score=0.")
    assert merged["reason"].endswith("), applying synthesize")
    for uri in (one, two):
        found = store.recall_path(uri)
        assert found["found"] and found["memory"]["id"] == made["memoryId"]
        assert found["memory"]["content"] == f"{old}；{new}"
    assert store.total() == 1
    copy = store.remember(f"{old}；{new}", "knowledge", three)
    assert copy == {"action": "skipped", "reason": "Exact duplicate (hash match)",
                    "memoryId": made["memoryId"]}  # fmt: skip
    assert store.recall_path(three)["found"] is False
    rewritten = store.remember("Maria moved the weekly sync to Wednesday", "knowledge", two)
    assert rewritten["action"] == "updated" and rewritten["memoryId"] == made["memoryId"]
    assert rewritten["reason"] == f"URI {two} already exists, updating canonical content"
    assert store.recall_path(one)["memory"]["content"] == "Maria moved the weekly sync to Wednesday"
