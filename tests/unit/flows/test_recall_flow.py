"""`memfuse recall`: one ranked answer over the store and the Markdown, with provenance."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from memfuse.recall.index import RecallIndex
from memfuse.state.folder import StateFolder
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Workspace
from tests.fakes import World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
TODAY = date.fromisoformat(DAY)
JOURNAL = (
    "## 09:30\n- Met Bob about the billing migration cutover plan\n"
    "- ok\n"  # the store's gate refuses it
    "- Remember: Alice prefers dark mode in every editor\n"
    "## 14:00\n- 今天讨论了 billing 迁移的回滚步骤\n"
)
RERANK = {
    "AGENT_MEMORY_RERANK_PROVIDER": "jina",
    "AGENT_MEMORY_RERANK_API_KEY": "sk-test-recall-0123456789",
}


def synced(world: World) -> None:
    world.journal(DAY, JOURNAL)
    (world.workspace / "MEMORY.md").write_text(
        "# MEMORY\n- Billing migration must finish by December\n"
    )
    assert world.run("sync", "--now", NOW).code == 0


def test_a_bullet_and_its_memory_are_one_result_with_both_provenances(world: World) -> None:
    synced(world)
    out = world.json("recall", "billing migration", "--now", NOW)
    assert out.code == 0
    assert out.data["sources"] == ["agent-memory", "journals"]
    assert out.data["reranked"] is False
    results = out.data["results"]
    contents = [r["content"] for r in results]
    assert len(contents) == len(set(contents))
    top = next(r for r in results if r["content"].startswith("Met Bob"))
    assert top["id"] is not None
    assert top["location"] == f"memory/{DAY}.md:2"
    assert top["date"] == DAY
    assert "store" in top["reason"] and "journal" in top["reason"]
    assert any(r["location"] == "MEMORY.md:2" for r in results)
    assert any("迁移" in r["content"] for r in results)  # CJK matches without a segmenter


def test_a_bullet_the_gate_rejected_is_still_found(world: World) -> None:
    synced(world)
    out = world.json("recall", "ok", "--now", NOW)
    hit = next(r for r in out.data["results"] if r["content"] == "ok")
    assert hit["id"] is None and hit["location"] == f"memory/{DAY}.md:3"


def test_with_the_store_down_the_journals_answer_alone(world: World) -> None:
    synced(world)
    world.gateway.down = "failed"
    out = world.json("recall", "dark mode", "--now", NOW)
    assert out.code == 0
    assert out.data["sources"] == ["journals"]
    assert out.data["results"][0]["content"].startswith("Remember: Alice prefers dark mode")
    assert any("journals alone" in w for w in out.envelope["warnings"])


def test_the_reranker_decides_the_order_and_a_failure_keeps_the_fused_one(world: World) -> None:
    synced(world)
    fused = world.json("recall", "billing", "--now", NOW).data["results"]
    world.rerank_factory(world.opened[0].rerank)  # create the fake reranker
    assert world.reranker is not None
    world.reranker.score = lambda _q, d: 10.0 if "回滚" in d else 1.0
    out = world.json("recall", "billing", "--now", NOW, env=RERANK)
    assert out.data["reranked"] is True
    assert "回滚" in out.data["results"][0]["content"]
    assert "+rerank" in out.data["results"][0]["reason"]
    assert "sk-test-recall" not in out.stdout + out.stderr

    world.reranker.error = "HTTP 500 from the reranker"
    broken = world.json("recall", "billing", "--now", NOW, env=RERANK)
    assert broken.code == 0
    assert broken.data["reranked"] is False
    assert [r["content"] for r in broken.data["results"]] == [r["content"] for r in fused]
    assert any("rerank failed" in w for w in broken.envelope["warnings"])


def test_type_and_days_filters(world: World) -> None:
    synced(world)
    knowledge = world.json("recall", "billing dark", "--type", "knowledge", "--now", NOW)
    assert {r["type"] for r in knowledge.data["results"]} == {"knowledge"}
    later = world.json("recall", "billing", "--days", "1", "--now", "2026-12-09T10:00")
    assert all(r["location"] is None or r["location"].startswith("MEMORY.md") or r["date"] is None
               for r in later.data["results"])  # fmt: skip


def test_recall_prints_under_quiet_it_is_the_payload(world: World) -> None:
    synced(world)
    out = world.run("recall", "dark mode", "-q", "--now", NOW)
    assert "Alice prefers dark mode" in out.stdout


def test_the_local_index_rereads_only_what_changed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / f"{DAY}.md").write_text("- Alpha bravo charlie\n")
    (ws / "memory" / "2026-11-28.md").write_text("- Delta echo foxtrot\n")
    state = ws / ".memfuse"
    state.mkdir(parents=True, mode=0o700)
    workspace, classifier = Workspace(ws, ws.parent / "state"), Classifier((), ())
    index = RecallIndex(workspace.state)
    try:
        assert index.refresh(workspace, classifier, print) == 2
        assert index.refresh(workspace, classifier, print) == 0
        (ws / "memory" / "2026-11-28.md").unlink()
        index.refresh(workspace, classifier, print)
        assert index.search("delta", 5, TODAY) == []
        assert [h.location for h in index.search("bravo", 5, TODAY)] == [f"memory/{DAY}.md:1"]
    finally:
        index.close()


def test_sync_keeps_the_local_index_current_for_recall(world: World) -> None:
    world.journal(DAY, JOURNAL)
    (world.workspace / "MEMORY.md").write_text("# MEMORY\n- Billing migration by December\n")
    first = world.json("sync", "--now", NOW)
    assert first.data["recall_index_refreshed"] == 2  # the journal and MEMORY.md
    index = RecallIndex(StateFolder(world.state))
    try:  # searchable before any recall ran
        hits = index.search("dark mode", 5, TODAY)  # the bullet, then its section's neighbours
        assert hits[0].location == f"memory/{DAY}.md:4"
    finally:
        index.close()
    assert world.json("sync", "--now", NOW).data["recall_index_refreshed"] == 0
    world.journal(DAY, JOURNAL + "- Paired with Dana on the flaky checkout test\n")
    assert world.json("sync", "--now", NOW).data["recall_index_refreshed"] == 1


def test_an_unreadable_local_index_is_rebuilt_with_one_warning(world: World) -> None:
    world.journal(DAY, JOURNAL)
    state = world.state
    state.mkdir(parents=True, mode=0o700)
    (state / "recall.sqlite3").write_bytes(b"this is not a database" * 100)  # a torn copy
    out = world.json("sync", "--now", NOW)
    assert out.code == 0
    assert out.data["counts"]["added"] == 3
    assert out.data["recall_index_refreshed"] == 1
    assert [w for w in out.envelope["warnings"] if "rebuilt from the Markdown" in w]
    (state / "recall.sqlite3").write_bytes(b"\0" * 4096)
    found = world.json("recall", "dark mode", "--now", NOW)
    assert found.data["results"][0]["location"] == f"memory/{DAY}.md:4"
    assert [w for w in found.envelope["warnings"] if "rebuilt from the Markdown" in w]


def test_a_link_in_place_of_the_local_index_is_moved_aside_not_followed(
    world: World, tmp_path: Path
) -> None:
    world.journal(DAY, JOURNAL)
    state = world.state
    state.mkdir(parents=True, mode=0o700)
    outside = tmp_path / "outside.db"
    outside.write_bytes(b"precious, not a database")
    (state / "recall.sqlite3").symlink_to(outside)
    out = world.json("sync", "--now", NOW)
    assert out.code == 0 and out.data["counts"]["added"] == 3
    assert out.data["recall_index_refreshed"] == 1  # rebuilt beside the link, not through it
    assert [w for w in out.envelope["warnings"] if "symbolic link" in w and "moved aside" in w]
    assert outside.read_bytes() == b"precious, not a database"
    assert not (state / "recall.sqlite3").is_symlink()
    assert [p for p in state.glob("recall.sqlite3.bad-*") if p.is_symlink()]


def test_a_link_in_place_of_the_index_wal_is_moved_aside_like_the_ledgers(
    world: World, tmp_path: Path
) -> None:
    world.journal(DAY, JOURNAL)
    state = world.state
    state.mkdir(parents=True, mode=0o700)
    outside = tmp_path / "outside"
    outside.write_bytes(b"not memfuse's")
    (state / "recall.sqlite3-wal").symlink_to(outside)
    out = world.json("recall", "dark mode", "--now", NOW)
    assert out.code == 0
    assert out.data["sources"] == ["agent-memory", "journals"]
    assert [w for w in out.envelope["warnings"] if "symbolic link" in w]
    assert outside.read_bytes() == b"not memfuse's"


def test_a_stored_result_carries_the_uri_it_was_synced_to(world: World) -> None:
    """agent-memory 2.2's recall names no URI (3.x+: null); the ledger knows it."""
    synced(world)
    out = world.json("recall", "billing migration", "--now", NOW)
    top = next(r for r in out.data["results"] if r["content"].startswith("Met Bob"))
    assert top["uri"] == f"event://journal/{DAY}#0930-1"
    assert world.gateway.direct("recall_path", {"uri": top["uri"]})["memory"]["id"] == top["id"]
    text = world.run("recall", "billing migration", "--now", NOW).stdout
    assert f"(memory/{DAY}.md:2, event://journal/{DAY}#0930-1; " in text


def test_a_damaged_ledger_costs_the_uris_and_one_warning_not_the_answer(world: World) -> None:
    synced(world)
    (world.state / "ledger.sqlite3").write_bytes(b"not a database" * 100)
    out = world.json("recall", "billing migration", "--now", NOW)
    assert out.code == 0
    top = next(r for r in out.data["results"] if r["content"].startswith("Met Bob"))
    assert top["id"] is not None and top["uri"] is None
    assert any("recall's results carry only the store's own URIs" in w
               for w in out.envelope["warnings"])  # fmt: skip


def test_since_and_until_keep_the_days_between_and_timeless_facts(world: World) -> None:
    world.journal("2026-11-20", "## 09:00\n- Billing review with finance, first round\n")
    world.journal("2026-11-27", "## 09:00\n- Billing review with finance, second round\n")
    (world.workspace / "MEMORY.md").write_text("# MEMORY\n- Billing review happens monthly\n")
    out = world.json("recall", "billing review", "--since", "2026-11-21", "--until", "2026-11-27",
                     "--now", NOW)  # fmt: skip
    assert out.code == 0
    assert {(r["date"], r["location"]) for r in out.data["results"]} == {
        ("2026-11-27", "memory/2026-11-27.md:2"), (None, "MEMORY.md:2")
    }  # fmt: skip
    bad = world.run("recall", "billing", "--since", "2026-11-28", "--until", "2026-11-27")
    assert bad.code == 2 and "is after --until" in bad.stderr


def test_an_edit_behind_a_journal_linked_inside_the_workspace_is_recalled(world: World) -> None:
    notes = world.workspace / "notes"
    notes.mkdir()
    (notes / "day.md").write_text("- Booked the venue for the offsite\n")
    (world.workspace / "memory" / f"{DAY}.md").symlink_to(notes / "day.md")
    world.gateway.down = "missing"  # the journals alone answer
    first = world.json("recall", "offsite venue", "--now", NOW)
    assert [r["content"] for r in first.data["results"]] == ["Booked the venue for the offsite"]
    (notes / "day.md").write_text("- Booked the lakeside venue for the offsite, 40 seats\n")
    again = world.json("recall", "offsite venue", "--now", NOW)
    assert [r["content"] for r in again.data["results"]] == [
        "Booked the lakeside venue for the offsite, 40 seats"
    ]


def test_recall_finds_no_fact_in_memory_mds_code_or_comments(world: World) -> None:
    """Issue 48: the regex reader indexed a fenced command and a comment's text as facts."""
    world.journal(DAY, JOURNAL)
    (world.workspace / "MEMORY.md").write_text(
        "# MEMORY\n\n```bash\nrm -rf / # not a fact\n```\n<!--\nhidden note\n-->\n"
        "- Billing migration must finish by December\n"
    )
    assert world.run("sync", "--now", NOW).code == 0
    for question in ("rm -rf not a fact", "hidden note"):
        out = world.json("recall", question, "--now", NOW)
        assert not [r for r in out.data["results"] if r["location"].startswith("MEMORY.md")]
    found = world.json("recall", "billing migration december", "--now", NOW).data["results"]
    assert any(r["location"] == "MEMORY.md:9" for r in found)
