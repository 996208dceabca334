"""No bullet leaves the store in silence (issue 32): odd dates, encodings, restored times,
duplicates, a lost ledger."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from memfuse.ledger.ledger import Ledger
from tests.fakes import World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"


def test_an_extreme_date_is_named_and_skipped_by_every_command(world: World) -> None:
    world.journal(DAY, "- Alice wants the billing fix shipped before the Friday freeze\n")
    weekly = world.workspace / "memory" / "weekly"
    weekly.mkdir(parents=True)
    (weekly / "9999-12-31.md").write_text("# Week\n\n## 9999-12-31\n\n- from the end of time\n")
    world.journal("0001-01-01", "- from the start of time\n")
    synced = world.json("sync", "--now", NOW)
    assert synced.code == 0, synced.stderr
    assert synced.data["counts"]["added"] == 1, (synced.data, synced.stderr)
    assert "memory/weekly/9999-12-31.md" in synced.stderr
    assert "memory/0001-01-01.md" in synced.stderr
    for args in (("recall", "billing"), ("where", f"{DAY}#0000-1"), ("status",), ("surface",)):
        outcome = world.json(*args, "--now", NOW)
        assert outcome.code in (0, 4), (args, outcome.stderr)
        assert "internal error" not in outcome.stderr
    world.gateway.down = "missing"
    down = world.json("recall", "time", "--now", NOW)
    assert down.code == 0, down.stderr
    assert "internal error" not in down.stderr


NOTE = "Remember to rotate the staging database credentials every month"
NEAR = "Remember to rotate the staging database credentials every single month"
OTHER = "Bob asked for the quarterly report draft by Thursday afternoon"


def _held(world: World) -> str:
    """Every journal memory's text, joined: what the store holds of the journals."""
    return "\n".join(world.gateway.journal_uris().values())


def _two_copies(world: World) -> None:
    """The same note written on two days and synced: the store keeps it as one memory."""
    world.journal("2026-11-28", f"- {NOTE}\n")
    world.journal(DAY, f"- {NOTE}\n")
    world.json("sync", "--now", NOW)


def test_editing_a_bullet_never_takes_its_duplicates_text_out_of_the_store(world: World) -> None:
    world.journal("2026-11-28", f"- {NOTE}\n")
    world.journal(DAY, f"- {NOTE}\n")
    first = world.json("sync", "--now", NOW)
    assert (first.data["counts"]["added"], first.data["counts"]["skipped"]) == (1, 1)
    world.journal("2026-11-28", f"- {OTHER}\n")  # the first copy is edited
    edited = world.json("sync", "--now", NOW)
    assert edited.code == 0, edited.stderr
    # the shared memory is rewritten once with both texts, at the first copy's URI
    assert (edited.data["refolded"], edited.data["resent"], edited.data["calls"]) == (1, 0, 2)
    held = _held(world)
    assert OTHER in held and NOTE in held  # both bullets' text is in the store
    assert world.json("sync", "--now", NOW).data["calls"] == 1  # and it settles


def test_a_near_duplicate_merged_into_an_edited_bullet_stays_in_the_store(world: World) -> None:
    world.journal(DAY, f"## 09:00\n- {NOTE}\n\n## 10:00\n- {NEAR}\n")
    first = world.json("sync", "--now", NOW)
    assert first.data["counts"]["merged"] == 1, first.data["counts"]
    world.journal(DAY, f"## 09:00\n- {OTHER}\n\n## 10:00\n- {NEAR}\n")
    world.json("sync", "--now", NOW)
    held = _held(world)
    assert OTHER in held and NEAR in held


def test_pruning_a_deleted_bullet_keeps_the_text_of_its_duplicate(world: World) -> None:
    world.journal("2026-11-28", f"- {NOTE}\n- {OTHER}\n")
    world.journal(DAY, f"- {NOTE}\n")
    world.json("sync", "--now", NOW)
    world.journal("2026-11-28", f"- {OTHER}\n")  # the first copy deleted: OTHER moves up
    pruned = world.json("sync", "--prune", "--now", NOW)
    assert pruned.code == 0, pruned.stderr
    held = _held(world)
    assert NOTE in held and OTHER in held


def test_verify_finds_a_shared_memory_rewritten_and_sends_the_bullet_again(world: World) -> None:
    _two_copies(world)
    # The store rewrites the shared memory behind memfuse's back (as a sync before this fix
    # did when the first copy was edited): the second bullet's text is gone.
    world.gateway.direct(
        "remember", {"content": OTHER, "uri": "knowledge://journal/2026-11-28#0000-1"}
    )
    assert NOTE not in _held(world)
    plain = world.json("sync", "--now", NOW)
    assert plain.data["calls"] == 1  # a plain sync trusts the ledger
    verified = world.json("sync", "--verify", "--now", NOW)
    assert verified.code == 0, verified.stderr
    assert verified.data["index"]["altered"] == 2  # the first bullet's text changed too
    assert "no longer holding the text" in verified.stdout
    assert NOTE in _held(world)


def test_a_dry_run_shows_the_plan_and_sends_nothing(world: World) -> None:
    _two_copies(world)
    world.journal("2026-11-28", f"- {OTHER}\n")
    before = world.gateway.count("remember")
    dry = world.json("sync", "--dry-run", "--now", NOW)
    assert dry.data["plan"]["send"] == []
    assert dry.data["plan"]["refold"] == ["2026-11-28#0000-1"]  # rewritten where it was made
    assert [w["content"] for w in dry.data["would_send"]] == [f"{OTHER}\n\n[Updated] {NOTE}"]
    assert world.gateway.count("remember") == before
    text = world.run("sync", "--dry-run", "--now", NOW).stdout
    assert "plan: 0 to send, 1 unchanged, 0 stale (0 to prune), 0 to send again" in text
    assert "1 shared memory(ies) to rewrite" in text


def test_a_journal_saved_as_utf16_or_utf32_is_synced(world: World) -> None:
    text = f"## 09:00\n- {NOTE}\n- {OTHER}\n"
    (world.workspace / "memory").mkdir(parents=True, exist_ok=True)
    (world.workspace / "memory" / f"{DAY}.md").write_bytes(text.encode("utf-16"))
    (world.workspace / "memory" / "2026-11-28.md").write_bytes(
        b"\x00\x00\xfe\xff" + f"- {NEAR}\n".encode("utf-32-be")
    )
    synced = world.json("sync", "--now", NOW)
    assert synced.code == 0, synced.stderr
    held = _held(world)
    assert NOTE in held and OTHER in held and NEAR in held
    assert "UTF-8" not in synced.stderr


def test_a_journal_that_cannot_be_read_is_an_alarm_until_it_is_fixed(world: World) -> None:
    world.journal("2026-11-28", f"- {NOTE}\n")
    folder = world.workspace / "memory" / f"{DAY}.md"
    folder.mkdir()  # a folder where the journal should be
    assert world.json("sync", "--now", NOW).code == 0
    status = world.json("status", "--now", NOW)
    assert status.code == 4
    assert any(f"memory/{DAY}.md cannot be read" in a for a in status.data["alarms"])
    again = world.json("sync", "--now", NOW)  # still there: still an alarm, not a one-time line
    assert f"memory/{DAY}.md" in again.stderr
    assert world.json("status", "--now", NOW).code == 4
    folder.rmdir()
    world.journal(DAY, f"- {OTHER}\n")
    world.json("sync", "--now", NOW)
    fixed = world.json("status", "--now", NOW)
    assert not any("cannot be read" in a for a in fixed.data["alarms"]), fixed.data["alarms"]


def test_a_same_size_edit_with_its_old_mtime_put_back_is_synced(world: World) -> None:
    path = world.journal(DAY, f"- {NOTE}\n")
    world.json("sync", "--now", NOW)
    before = path.stat()
    edited = NOTE.replace("month", "weeks")  # the same length
    assert len(edited) == len(NOTE)
    path.write_text(f"- {edited}\n", encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as rsync -t would
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    synced = world.json("sync", "--now", NOW)
    assert synced.data["dates"] == [DAY]
    assert edited in _held(world)


def _ledger(world: World) -> Path:
    return world.state / "ledger.sqlite3"


def test_a_rollback_survives_the_loss_of_its_ledger_and_shows_in_status(world: World) -> None:
    world.journal(DAY, f"- {NOTE}\n- {OTHER}\n")
    world.json("sync", "--now", NOW)
    rolled = world.json("rollback", "--now", NOW)
    assert rolled.code == 0 and not _held(world)
    status = world.json("status", "--now", f"{DAY}T23:00")
    assert status.data["paused_since"] == rolled.data["paused_since"]
    assert "rolled back since" in world.run("status", "--now", f"{DAY}T23:00").stdout
    assert status.code == 0  # a fresh pause is a decision, not yet an alarm
    for suffix in ("", "-wal", "-shm"):
        Path(f"{_ledger(world)}{suffix}").unlink(missing_ok=True)  # the ledger is lost
    after = world.json("sync", "--all", "--now", "2026-11-30T14:00")
    assert after.data["counts"]["added"] == 0 and not _held(world)  # the rollback holds
    late = world.json("status", "--now", "2026-12-01T14:00")
    assert late.code == 4
    assert any("rolled back since" in a for a in late.data["alarms"])
    world.json("rollback", "--undo", "--now", "2026-12-01T15:00")
    resumed = world.json("sync", "--all", "--now", "2026-12-01T16:00")
    assert resumed.data["counts"]["added"] == 2
    assert world.json("status", "--now", "2026-12-01T16:00").data.get("paused_since") is None


def test_a_ledger_set_aside_is_an_alarm_and_is_rebuilt_from_the_store(world: World) -> None:
    world.journal(DAY, f"- {NOTE}\n- {OTHER}\n")
    world.json("sync", "--now", NOW)
    for suffix in ("-wal", "-shm"):
        Path(f"{_ledger(world)}{suffix}").unlink(missing_ok=True)
    _ledger(world).write_bytes(b"not a database at all, but bytes a crash left" * 100)
    world.journal(DAY, f"- {NOTE}\n- {OTHER}\n- {NEAR}\n")
    before = world.gateway.count("remember")
    rebuilt = world.json("sync", "--now", "2026-11-30T14:00")
    assert rebuilt.code == 0, rebuilt.stderr
    assert rebuilt.data["rebuilt"] == 2
    assert world.gateway.count("remember") - before == 1  # only the new bullet is sent
    status = world.json("status", "--now", "2026-11-30T14:05")
    assert status.code == 4
    assert any("moved aside" in a for a in status.data["alarms"])


def test_a_ledger_of_an_older_builds_schema_is_set_aside_and_rebuilt(world: World) -> None:
    """Before a first release no state is migrated (issue 48): a ledger whose schema this
    build does not make is moved aside, and the store's own record rebuilds it."""
    world.journal(DAY, f"- {NOTE}\n- {OTHER}\n")
    world.json("sync", "--now", NOW)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{_ledger(world)}{suffix}").unlink(missing_ok=True)
    old = sqlite3.connect(_ledger(world))
    old.execute("CREATE TABLE entries (position TEXT PRIMARY KEY, content_hash TEXT)")
    old.execute("INSERT INTO entries VALUES ('2026-11-29#0000-1', 'ab')")
    old.commit()
    old.close()
    before = world.gateway.count("remember")
    rebuilt = world.json("sync", "--now", "2026-11-30T14:00")
    assert rebuilt.code == 0, rebuilt.stderr
    assert rebuilt.data["rebuilt"] == 2
    assert world.gateway.count("remember") == before  # nothing sent twice
    assert len(list(world.state.glob("ledger.sqlite3.bad-*"))) == 1


def test_a_ledger_that_cannot_be_opened_now_is_left_where_it_is(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.journal(DAY, f"- {NOTE}\n")
    world.json("sync", "--now", NOW)
    kept = _ledger(world).read_bytes()

    def full(_state: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Ledger, "_open", staticmethod(full))
    failed = world.json("sync", "--now", NOW)
    assert failed.code != 0
    assert "cannot be opened now" in failed.stderr
    assert _ledger(world).read_bytes() == kept
    assert not list(world.state.glob("ledger.sqlite3.bad-*"))


def test_a_verifying_sync_reads_each_journal_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memfuse.confine import WorkspaceFiles

    for day in ("2026-11-27", "2026-11-28", DAY):
        world.journal(day, f"- {OTHER} on {day}\n")
    world.json("sync", "--all", "--now", NOW)
    read: list[str] = []
    real = WorkspaceFiles.read

    def counted(self: WorkspaceFiles, path: Path) -> bytes:
        read.append(path.name)
        return real(self, path)

    monkeypatch.setattr(WorkspaceFiles, "read", counted)
    verified = world.json("sync", "--all", "--verify", "--now", NOW)
    assert verified.code == 0, verified.stderr
    journals = [name for name in read if name.startswith("2026-")]
    assert sorted(journals) == ["2026-11-27.md", "2026-11-28.md", f"{DAY}.md"]
