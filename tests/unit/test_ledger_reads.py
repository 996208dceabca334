"""The ledger's read-only questions: asked without creating, migrating or locking anything."""

from __future__ import annotations

from pathlib import Path

from memfuse.ledger.ledger import Entry, Ledger
from memfuse.ledger.reader import LedgerReader, uris_of
from memfuse.state.folder import StateFolder

DAY = "2026-11-29"


def entry(n: int, outcome: str, memory_id: str | None, *, created: bool) -> Entry:
    uri = f"event://journal/{DAY}#0930-{n}" if memory_id else None
    return Entry(f"{DAY}#0930-{n}", DAY, f"h{n}", outcome, uri, "event", memory_id, created)


def test_a_merged_memory_has_the_uri_of_the_bullet_that_created_it(tmp_path: Path) -> None:
    state = StateFolder(tmp_path / "ws" / ".memfuse")
    state.path.mkdir(parents=True, mode=0o700)
    ledger = Ledger(state)
    ledger.record(entry(1, "added", "m1", created=True), "t")
    ledger.record(entry(2, "merged", "m1", created=False), "t")  # 4.x: merged into m1
    ledger.record(entry(3, "added", "m3", created=True), "t")
    ledger.record(entry(4, "rejected", None, created=False), "t")
    ledger.close()
    assert uris_of(state, ["m1", "m3", "unknown"]) == {
        "m1": f"event://journal/{DAY}#0930-1",
        "m3": f"event://journal/{DAY}#0930-3",
    }
    reader = LedgerReader.open(state)
    assert reader is not None
    assert reader.outcome_counts() == {"added": 2, "merged": 1, "rejected": 1}
    reader.close()


def test_no_ledger_is_no_answer_and_creates_none(tmp_path: Path) -> None:
    state = StateFolder(tmp_path / "ws" / ".memfuse")
    state.path.mkdir(parents=True, mode=0o700)
    assert uris_of(state, ["m1"]) == {}
    assert LedgerReader.open(state) is None
    assert not state.ledger.exists()


def test_the_memories_expected_at_memfuses_uris_are_counted_once_each(tmp_path: Path) -> None:
    """Bullets the store folded into one memory are one memory: counted per bullet, a store
    that merged two of them looked reset to every sync after (issue 39, family 1)."""
    state = StateFolder(tmp_path / "ws" / ".memfuse")
    state.path.mkdir(parents=True, mode=0o700)
    ledger = Ledger(state)
    ledger.record(entry(1, "added", "m1", created=True), "t")
    ledger.record(entry(2, "updated", "m1", created=False), "t")  # its URI bound to m1 (4.x)
    ledger.record(entry(3, "added", "m3", created=True), "t")
    ledger.record(entry(4, "merged", "m3", created=False), "t")
    assert ledger.expected_count() == 2
    ledger.close()
