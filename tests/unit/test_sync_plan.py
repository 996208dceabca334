"""`sync`'s plan is a pure function of what was read: driven here with plain data."""

from __future__ import annotations

from datetime import date

from memfuse.ledger.ledger import Entry, content_hash
from memfuse.sync.plan import plan
from memfuse.sync.reading import Item, Reading, touched
from memfuse.text.classify import Verdict
from memfuse.workspace.bullets import Bullet
from memfuse.workspace.position import JournalPosition

DAY = date(2026, 11, 29)


def _entry(position: str, text: str, memory_id: str, outcome: str = "added") -> Entry:
    return Entry(
        position, position[:10], content_hash(text), outcome, f"event://journal/{position}",
        "event", memory_id, created=outcome == "added",
    )  # fmt: skip


def _item(n: int, text: str, previous: Entry | None) -> Item:
    position = JournalPosition(DAY, "0000", n)
    bullet = Bullet("0000", n, text, n)
    return Item(position, bullet, Verdict("event", None), content_hash(text), previous)


def test_a_change_to_a_shared_memory_memfuse_made_rewrites_it_once() -> None:
    first = _entry("2026-11-29#0000-1", "old text", "m1")
    copy = _entry("2026-11-29#0000-2", "old text", "m1", outcome="skipped")
    alone = _entry("2026-11-29#0000-3", "alone", "m3")
    reading = Reading(
        ["2026-11-29"],
        [_item(1, "new text", first), _item(2, "old text", copy), _item(3, "alone", alone)],
        {}, {},
    )  # fmt: skip
    assert touched(reading, prune=False) == {"m1"}
    done = plan(reading, {"m1": [first, copy]}, paused=None, prune=False)
    assert (done.send, done.resend) == ((), ())
    [refold] = done.refold
    assert (refold.anchor, refold.parts) == (first, ("new text", "old text"))
    assert [m.entry.position for m in refold.carries] == ["2026-11-29#0000-1"]
    assert done.unchanged == 2


def test_a_change_to_a_shared_memory_memfuse_did_not_make_sends_its_other_bullets_again() -> None:
    first = _entry("2026-11-29#0000-1", "old text", "m1", outcome="merged")
    copy = _entry("2026-11-29#0000-2", "old text", "m1", outcome="skipped")
    reading = Reading(
        ["2026-11-29"], [_item(1, "new text", first), _item(2, "old text", copy)], {}, {}
    )
    done = plan(reading, {"m1": [first, copy]}, paused=None, prune=False)
    assert [i.position.key for i in done.send] == ["2026-11-29#0000-1"]
    assert [i.position.key for i in done.resend] == ["2026-11-29#0000-2"]
    assert done.refold == ()


def test_pruning_touches_only_what_memfuse_created_and_a_pause_plans_nothing() -> None:
    gone = _entry("2026-11-29#0000-2", "deleted", "m2")
    merged = _entry("2026-11-29#0000-3", "folded", "m9", outcome="merged")
    reading = Reading(["2026-11-29"], [], {gone.position: gone, merged.position: merged}, {})
    assert touched(reading, prune=True) == {"m2"}
    assert touched(reading, prune=False) == set()
    pruning = plan(reading, {}, paused=None, prune=True)
    assert [e.position for e in pruning.prune] == [gone.position, merged.position]
    paused = plan(reading, {}, paused="2026-11-28T03:00", prune=True)
    assert (paused.send, paused.prune, paused.resend) == ((), (), ())
    assert set(paused.stale) == {gone.position, merged.position}
