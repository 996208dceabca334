"""`rollback`'s plan is a pure function of what was read: driven here with plain data."""

from __future__ import annotations

from memfuse.commands.rollback import candidates, plan
from memfuse.ledger.ledger import Entry
from memfuse.store.answers import StoredMemory

SOURCE = "memory-sync:2026-11-29#0000-1"


def _entry(n: int, memory_id: str, outcome: str = "added") -> Entry:
    position = f"2026-11-29#0000-{n}"
    return Entry(
        position, "2026-11-29", "digest", outcome, f"event://journal/{position}", "event",
        memory_id, created=outcome == "added",
    )  # fmt: skip


def _memory(memory_id: str, uri: str, source: str | None = SOURCE) -> StoredMemory:
    return StoredMemory(content="text", type="event", id=memory_id, uri=uri, source=source)


def test_only_memfuses_own_memories_are_forgotten_and_every_position_withdrawn() -> None:
    made, merged, gone = _entry(1, "m1"), _entry(2, "m9", "merged"), _entry(3, "m3")
    entries = [made, merged, gone]
    expected = candidates(entries, listed=None)
    assert expected == {made.uri: "m1", gone.uri: "m3"}  # a merge into another's is not asked
    assert made.uri and gone.uri
    done = plan(entries, expected, {made.uri: _memory("m1", made.uri), gone.uri: None})
    assert [(s.uri, s.verdict) for s in done.forget] == [(made.uri, "forget")]
    assert done.as_dict()["keep"] == [gone.uri]
    assert done.withdraw == tuple(e.position for e in entries)


def test_a_memory_someone_else_put_at_the_uri_is_kept() -> None:
    made = _entry(1, "m1")
    assert made.uri
    replaced = plan([made], {made.uri: "m1"}, {made.uri: _memory("m2", made.uri)})
    assert [s.verdict for s in replaced.steps] == ["not memfuse's"]
    assert replaced.steps[0].memory_id == "m2"  # the id the store answered, for the person


def test_a_listed_uri_the_ledger_lost_is_forgotten_only_with_memfuses_source() -> None:
    ours, theirs = "event://journal/2026-11-28#0900-1", "event://journal/2026-11-28#0900-2"
    expected = candidates([], listed={ours, theirs})
    assert expected == {ours: None, theirs: None}
    found = {ours: _memory("a", ours), theirs: _memory("b", theirs, source="agent")}
    done = plan([], expected, found)
    assert [(s.uri, s.memory_id) for s in done.forget] == [(ours, "a")]


def test_positions_already_withdrawn_are_not_withdrawn_again() -> None:
    done = plan([_entry(1, "m1", "withdrawn"), _entry(2, "m2")], {}, {})
    assert done.withdraw == ("2026-11-29#0000-2",)
    assert done.steps == ()
