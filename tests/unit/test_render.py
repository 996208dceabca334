"""memfuse.run.render: the lines people read, from a command's data alone, in the cases flows rarely
reach (a failing history, a conflict, a long list of refusals)."""

from __future__ import annotations

from memfuse.run import render
from memfuse.run.results import StatusData, SyncData, TidyData

NOW = "2026-11-29T22:00:00+00:00"


def _sync(**extra: object) -> SyncData:
    data: SyncData = {
        "dry_run": False, "counts": {"added": 0, "rejected": 0}, "dates": ["2026-11-29"],
        "calls": 3, "stale": [], "rejected": [], "pruned": [], "scope": "changed",
        "plan": {"send": [], "unchanged": 0, "stale": [], "prune": [], "resend": []},
    }  # fmt: skip
    data.update(extra)  # type: ignore[typeddict-item]
    return data


def test_sync_lists_ten_refusals_and_leaves_the_rest_to_json() -> None:
    rejected = [{"position": f"2026-11-29#{n}", "reason": "too short"} for n in range(25)]
    lines = render.sync(_sync(rejected=rejected))
    shown = [line for line in lines if "rejected by the store's gate" in line]
    assert len(shown) == render.SHOWN_AT_MOST
    assert shown[0] == "  rejected by the store's gate: 2026-11-29#0 (too short)"


def test_sync_tally_follows_the_counts_and_says_a_dry_run() -> None:
    data = _sync(dry_run=True, would_send=[{"uri": "event://journal/x", "content": "Met Bob"}])
    data["plan"]["send"] = ["2026-11-29#0000-1"]
    head, plan, sent = render.sync(data)
    assert head == (
        "sync: 1 journal(s) (2026-11-29): dry run, 1 to send; 0 added, 0 rejected; 3 MCP call(s)"
    )
    assert plan == (
        "  plan: 1 to send, 0 unchanged, 0 stale (0 to prune),"
        " 0 to send again (they share a memory with a change)"
    )
    assert sent == "  would send event://journal/x  'Met Bob'"


def test_sync_pruned_says_whether_the_memory_was_deleted_or_only_released() -> None:
    pruned = [
        {"position": "2026-11-28#1", "memory_id": "a", "deleted": True},
        {"position": "2026-11-28#2", "memory_id": "b", "deleted": False},
    ]
    lines = render.sync(_sync(pruned=pruned))
    assert lines[-2:] == [
        "  pruned 2026-11-28#1: deleted from the store",
        "  pruned 2026-11-28#2: released (not created by memfuse)",
    ]


def _status(**extra: object) -> StatusData:
    data: StatusData = {
        "workspace": "/ws", "state": "/state/ws", "at": NOW, "commands": {}, "recent": {"path": "/ws/RECENT.md",
        "exists": False, "age_hours": None}, "ledger": {"outcomes": None}, "lock": None,
        "generation": None, "generation_seen": None, "alarms": [],
    }  # fmt: skip
    data.update(extra)  # type: ignore[typeddict-item]
    return data


def _run(started: str, status: str, store: str) -> dict[str, object]:
    return {"command": "sync", "started": started, "duration_ms": 5, "status": status,
            "exit_code": 0 if status != "failed" else 3, "store": store, "counts": {"added": 2}}  # fmt: skip


def test_status_says_when_a_failing_command_last_succeeded() -> None:
    failing = {
        "last_run": _run("2026-11-29T14:00:00+00:00", "ok", "failed"),
        "last_success": "2026-11-27T22:00:00+00:00",
        "alarm": None,
    }
    never = {**failing, "last_success": None}
    lines = render.status(_status(commands={"sync": failing, "surface": never}))
    assert lines[1] == (
        "  sync     last run 2026-11-29 14:00 +00:00 (8 h ago): ok, store failed (2 added);"
        " last success 2026-11-27 22:00 +00:00 (2 days ago)"  # times carry their zone
    )
    assert lines[2].endswith("; no success")


def test_status_names_an_unreadable_ledger_a_held_lock_and_the_alarm() -> None:
    lines = render.status(
        _status(
            ledger={"outcomes": None, "error": "the ledger is damaged: file is not a database"},
            lock="pid 4242 (memfuse sync)",
            generation=4,
            generation_seen="2026-11-28T03:00:00+00:00",
            alarms=["sync needs a person: 3 failed runs in a row"],  # as Alarm.line() says it
        )
    )
    assert "  ledger   the ledger is damaged: file is not a database" in lines
    assert "  lock     held by pid 4242 (memfuse sync)" in lines
    assert (
        "  store    agent-memory 4.x (as `memfuse doctor` saw it, 2026-11-28 03:00 +00:00)" in lines
    )
    assert lines[-1] == "sync needs a person: 3 failed runs in a row"  # once, not twice


def test_tidy_shows_a_conflict_with_the_line_that_wins_and_a_dry_run_archive() -> None:
    data: TidyData = {
        "dry_run": True, "reflect": None, "reflect_totals": None,
        "consistency": {"status": "conflict", "summary": "consistency check: ⚠️ CONFLICT (1)",
                        "items": [{"memory": "Alice prefers light mode", "memory_id": "m1",
                                   "memory_md_line": "Alice prefers dark mode", "line_no": 4,
                                   "similarity": 0.9, "verdict": "conflict",
                                   "why": "an opposite word"}]},
        "memory_md": {"exists": True, "lines": 12, "backup": None, "over_limit": False},
        "status": None,
        "archive": {"archived": [{"date": "2026-11-01", "weekly": "w44.md", "appended": None}],
                    "refused": []},
    }  # fmt: skip
    assert render.tidy(data) == [
        "reflect: skipped (dry run)",
        "consistency check: ⚠️ CONFLICT (1)",
        "  ⚠️ store:     Alice prefers light mode",
        "     MEMORY.md: Alice prefers dark mode (line 4; an opposite word; MEMORY.md is the truth)",
        "MEMORY.md: 12 lines, not backed up (dry run)",
        "archive: would archive 1 journal(s) into 1 weekly file(s); 0 refused (unsynced bullets)",
    ]
