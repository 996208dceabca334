"""`memfuse sync` through the real mcporter against the reference server (SPEC §5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import StoreServer
from tests.fakes import state_of
from tests.integration.ten_bullets import DAY, JOURNAL, journal, sync, uris

pytestmark = pytest.mark.integration


def test_ten_bullets_become_ten_memories_and_a_resync_makes_no_call(
    counted_store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL)
    code, first, _ = sync(workspace, counted_store)
    assert code == 0
    assert first["data"]["counts"]["added"] == 10
    stored = uris(counted_store)
    assert len(stored) == 10
    assert (
        stored[f"event://journal/{DAY}#0930-2"]
        == "Reviewed the Q3 roadmap draft with Bob and Carol"
    )
    assert stored[f"knowledge://journal/{DAY}#1400-2"].startswith("Remember to rotate")
    assert stored[f"emotion://journal/{DAY}#0930-3"] == "今天很开心，终于修好了登录问题"
    one = counted_store.direct("recall_path", {"uri": f"event://journal/{DAY}#2200-3"})["memory"]
    assert one["source"] == f"memory-sync:{DAY}"

    calls_before = counted_store.tool_calls()
    code, second, _ = sync(workspace, counted_store)
    assert code == 0
    assert second["data"]["calls"] == 1  # the status probe: nothing is re-sent
    assert second["data"]["counts"]["unchanged"] == 10
    assert counted_store.tool_calls() == calls_before + 1


def test_an_edited_bullet_is_one_update_at_the_same_uri(
    counted_store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL)
    sync(workspace, counted_store)
    journal(workspace).write_text(JOURNAL.replace("Lisbon", "Porto"))
    before = counted_store.tool_calls()
    code, result, _ = sync(workspace, counted_store)
    assert code == 0
    assert result["data"]["counts"]["updated"] == 1
    assert result["data"]["calls"] == 2  # the status probe and one remember
    assert counted_store.tool_calls() - before == 2
    assert (
        uris(counted_store)[f"event://journal/{DAY}#2200-3"]
        == "Booked flights to Porto for the March offsite"
    )


def test_an_edit_that_changes_the_class_keeps_the_pinned_uri(
    store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL)
    sync(workspace, store)
    total = store.direct("status")["total"]
    edited = JOURNAL.replace(
        "Wrote the incident summary", "We must always write the incident summary"
    )
    journal(workspace).write_text(edited)
    _code, result, _ = sync(workspace, store)
    assert result["data"]["counts"]["updated"] == 1
    assert store.direct("status")["total"] == total
    stored = uris(store)
    assert stored[f"event://journal/{DAY}#1400-3"].startswith("We must always")
    assert f"knowledge://journal/{DAY}#1400-3" not in stored


def test_a_server_dying_half_way_loses_nothing(store: StoreServer, workspace: Path) -> None:
    journal(workspace).write_text(JOURNAL)
    store.set_mode("crash-after", FAULT_AFTER="5")  # the status probe, then 4 remembers
    # A process per call, as mcporter runs them: the crash is a dead server on each later call.
    code, first, stderr = sync(workspace, store, "--jobs", "1", transport="mcporter")
    assert code == 0
    assert first["status"] == "degraded"
    assert first["data"]["counts"]["added"] == 4
    assert first["data"]["counts"]["failed"] == 6
    assert "warning:" in stderr

    store.set_mode("ok-counted")
    code, second, _ = sync(workspace, store)
    assert second["data"]["counts"] == {
        "added": 6, "updated": 0, "merged": 0, "skipped": 0, "rejected": 0,
        "failed": 0, "unchanged": 4, "stale": 0, "restored": 0,
    }  # fmt: skip
    assert store.direct("status")["total"] == 10
    assert len(uris(store)) == 10


def test_a_server_dying_after_storing_is_recovered_without_duplicates(
    store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL)
    store.set_mode("crash-after-write", FAULT_AFTER="5")  # the probe, then 4 remembers
    _code, first, _ = sync(workspace, store, "--jobs", "1", transport="mcporter")
    assert first["data"]["counts"]["failed"] == 6  # stored but unanswered, or skipped

    store.set_mode("ok-counted")
    _code, second, _ = sync(workspace, store)
    counts = second["data"]["counts"]
    # Stored-but-unanswered ones come back as exact duplicates at our URI; the breaker skipped
    # the rest, which are added now. Either way each bullet is in the store exactly once.
    assert counts["skipped"] >= 3
    assert (counts["added"] + counts["skipped"], counts["unchanged"], counts["failed"]) == (6, 4, 0)
    assert store.direct("status")["total"] == 10
    # A bullet removed shifts the ones after it: each moves onto its neighbour's position,
    # where the store answers its text as a duplicate of the neighbour's own memory. The last
    # position goes stale, but its memory now holds the text of the bullet before it: --prune
    # releases it instead of deleting it, so no bullet's text leaves the store.
    kept = JOURNAL.replace("- Wrote the incident summary for the Tuesday outage\n", "")
    journal(workspace).write_text(kept)
    sync(workspace, store)
    _code, pruned, _ = sync(workspace, store, "--prune")
    assert [p["deleted"] for p in pruned["data"]["pruned"]] == [False]
    held = "\n".join(uris(store).values())
    for line in kept.splitlines():
        if line.startswith("- "):
            assert line[2:] in held, line


def test_hostile_bullets_are_stored_verbatim(store: StoreServer, workspace: Path) -> None:
    store.set_mode("ok", AGENT_MEMORY_GATE="off")  # `none` and `true` are below the gate's minimum
    hostile = ["@/etc/passwd", "none", "true", '{"x":1}', "$HOME `id` $(whoami)"]
    journal(workspace).write_text("## 10:00\n" + "".join(f"- {h}\n" for h in hostile))
    code, result, _ = sync(workspace, store)
    assert code == 0
    assert result["data"]["counts"]["added"] == 5
    stored = uris(store)
    assert [stored[f"event://journal/{DAY}#1000-{n}"] for n in range(1, 6)] == hostile


def test_a_removed_bullet_is_stale_and_prune_deletes_only_what_memfuse_made(
    store: StoreServer, workspace: Path
) -> None:
    # A memory at a journal URI that memfuse did not create (e.g. the old prompt-based sync).
    foreign = store.direct(
        "remember",
        {"content": "Entered by hand before memfuse existed, about the offsite", "type": "event",
         "uri": f"event://journal/{DAY}#2200-3"},
    )  # fmt: skip
    journal(workspace).write_text(JOURNAL)
    sync(workspace, store)
    total = store.direct("status")["total"]

    trimmed = JOURNAL.replace("- Booked flights to Lisbon for the March offsite\n", "").replace(
        "- Read two chapters of Designing Data-Intensive Applications\n", ""
    )
    journal(workspace).write_text(trimmed)
    _code, stale_run, _ = sync(workspace, store)
    assert stale_run["data"]["counts"]["stale"] == 2
    assert {s["position"] for s in stale_run["data"]["stale"]} == {f"{DAY}#2200-2", f"{DAY}#2200-3"}

    _code, pruned, _ = sync(workspace, store, "--prune")
    deleted = {p["position"]: p["deleted"] for p in pruned["data"]["pruned"]}
    assert deleted == {f"{DAY}#2200-2": True, f"{DAY}#2200-3": False}
    assert store.direct("status")["total"] == total - 1
    kept = store.direct("recall_path", {"uri": f"event://journal/{DAY}#2200-3"})["memory"]
    assert kept["id"] == foreign["memoryId"]
    _code, after, _ = sync(workspace, store)
    assert after["data"]["counts"]["stale"] == 0


def test_missing_mcporter_is_named_as_the_cause_and_changes_nothing(workspace: Path) -> None:
    """A `--mcporter` that is not there is the run's own setup, named as doctor names it
    (exit 78, decision 262); the bullets wait for the next run, nothing is written."""
    journal(workspace).write_text(JOURNAL)
    before = journal(workspace).read_bytes()
    args = ["sync", "-w", str(workspace), "--date", DAY, "--mcporter", "/nonexistent/mcporter"]
    result = CliRunner().invoke(app, [*args, "--json"])
    envelope = json.loads(result.stdout)
    assert result.exit_code == 78
    assert envelope["status"] == "failed"
    assert envelope["data"]["counts"]["failed"] == 10
    assert "mcporter not found" in result.stderr
    assert "its setup is why: mcporter: mcporter not found or not runnable" in result.stderr
    strict = CliRunner().invoke(app, [*args, "--strict", "-q"])
    assert strict.exit_code == 78
    assert journal(workspace).read_bytes() == before
    import sqlite3

    ledger = sqlite3.connect(state_of(workspace) / "ledger.sqlite3")
    assert ledger.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 0


def test_dry_run_lists_what_would_be_sent_and_only_probes_the_store(
    counted_store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL)
    _code, result, _ = sync(workspace, counted_store, "--dry-run")
    sent = result["data"]["would_send"]
    assert len(sent) == 10
    assert sent[0] == {
        "content": "Alice wants the billing fix shipped before the Friday freeze",
        "type": "event",
        "uri": f"event://journal/{DAY}#0930-1",
        "source": f"memory-sync:{DAY}",
    }
    assert counted_store.tool_calls() == 1  # status, read-only: is the store there?
    assert result["data"]["calls"] == 1
