"""The store's folds, modelled (memfuse.ledger.folds): pure functions driven with plain data."""

from __future__ import annotations

from memfuse.ledger.folds import Member, carried, plan_fold, plan_folds
from memfuse.ledger.ledger import Entry, content_hash
from memfuse.store.generations import BASELINE, GENERATIONS, generation_of

DAY = "2026-11-29"


def _entry(n: int, text: str, outcome: str = "added", *, created: bool = False) -> Entry:
    position = f"{DAY}#0000-{n}"
    return Entry(position, DAY, content_hash(text), outcome, f"knowledge://journal/{position}",
                 "knowledge", "m1", created=created)  # fmt: skip


def _now(entry: Entry, text: str | None) -> Member:
    return Member(entry, text, None if text is None else content_hash(text))


def test_the_separator_is_the_generations() -> None:
    joins = {g.number: g.merge_separator for g in (*GENERATIONS, BASELINE)}
    assert joins == {2: "\n\n[Updated] ", 3: "\n\n[Updated] ", 4: "；", 5: "；"}


def test_a_merged_member_edited_refolds_the_memory_at_its_creators_uri() -> None:
    made = _entry(1, "nine", created=True)
    merged = _entry(2, "nine sharp", "merged")
    fold = plan_fold("m1", [_now(merged, "ten sharp"), _now(made, "nine")])
    assert fold is not None and fold.refold is not None and fold.leave == ()
    assert fold.refold.anchor == made
    assert fold.refold.text("；") == "nine；ten sharp"  # in the journals' order
    assert [m.entry for m in fold.refold.carries] == [merged]


def test_an_exact_duplicate_edited_leaves_without_a_rewrite() -> None:
    made = _entry(1, "note", created=True)
    copies = [_now(_entry(n, "note", "skipped"), "note") for n in range(2, 600)]
    edited = _now(_entry(600, "note", "skipped"), "note, edited")
    fold = plan_fold("m1", [_now(made, "note"), *copies, edited])
    assert fold is not None
    assert (fold.refold, fold.leave) == (None, (f"{DAY}#0000-600",))


def test_the_last_holder_of_a_text_leaving_rewrites_the_memory_without_it() -> None:
    made = _entry(1, "nine", created=True)
    merged = _entry(2, "nine sharp", "merged")
    fold = plan_fold("m1", [_now(made, "nine"), _now(merged, None)])  # gone from its journal
    assert fold is not None and fold.refold is not None
    assert (fold.refold.parts, fold.refold.carries) == (("nine",), ())


def test_a_memory_memfuse_did_not_make_is_never_rewritten() -> None:
    ingested = [_entry(1, "note", "skipped"), _entry(2, "note", "skipped")]
    only_copies = plan_fold("m1", [_now(ingested[0], "note"), _now(ingested[1], "other")])
    assert only_copies is not None
    assert (only_copies.refold, only_copies.leave) == (None, (f"{DAY}#0000-2",))
    merged = _entry(3, "note too", "merged")
    assert plan_fold("m1", [_now(ingested[0], "note"), _now(merged, "changed")]) is None


def test_a_member_the_store_lost_or_one_not_read_is_not_modelled() -> None:
    made = _entry(1, "nine", created=True)
    lost = _entry(2, "nine sharp", "lost")
    assert plan_fold("m1", [_now(made, "ten"), _now(lost, "nine sharp")]) is None
    sharing = {"m1": [made, _entry(2, "nine sharp", "merged")]}
    assert plan_folds(sharing, {made.position: ("ten", content_hash("ten"))}) == {}


def test_a_refolds_answer_is_recorded_for_the_bullets_it_carries() -> None:
    made = _entry(1, "nine", created=True)
    merged = _entry(2, "nine sharp", "merged")
    fold = plan_fold("m1", [_now(made, "ten"), _now(merged, "ten sharp")])
    assert fold is not None and fold.refold is not None
    updated = carried(fold.refold, "updated", "m1")
    assert [(e.outcome, e.created, e.content_hash) for e in updated] == [
        ("added", True, content_hash("ten")),
        ("merged", False, content_hash("ten sharp")),
    ]
    refused = carried(fold.refold, "rejected", None)
    assert {(e.outcome, e.uri, e.created) for e in refused} == {("rejected", None, False)}


def test_a_refold_is_written_at_its_anchor_joined_as_the_generation_joins() -> None:
    from memfuse.ledger.refolds import writes

    made = _entry(1, "nine", created=True)
    fold = plan_fold("m1", [_now(made, "nine"), _now(_entry(2, "x", "merged"), "ten sharp")])
    assert fold is not None and fold.refold is not None
    [four] = writes([fold.refold], generation_of(["reindex"]))
    assert four.arguments() == {"content": "nine；ten sharp", "type": "knowledge",
                                "uri": made.uri, "source": f"memory-sync:{DAY}"}  # fmt: skip
    [two] = writes([fold.refold], BASELINE)
    assert two.content == "nine\n\n[Updated] ten sharp"


def test_a_bullet_a_later_generation_merged_clause_by_clause_is_held() -> None:
    """agent-memory 4.x/5.x's synthesize cuts merged texts at clause ends and joins the
    distinct clauses with `；`: the bullet is held in pieces, not as a whole."""
    from memfuse.ledger.reconcile import holds

    bullet = "Deploy v2.5 to staging. Then run the smoke tests!"
    stored = "Deploy v2；5 to staging；Then run the smoke tests；Alice owns the staging cluster"
    assert holds(stored, bullet)
    assert holds("Alice  owns the staging\ncluster", "Alice owns the staging cluster")
    assert not holds(stored, "Deploy v2.6 to staging.")
    assert not holds(stored, "...")
