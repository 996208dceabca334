"""Issue 29, as a hostile agent tried it: one-time changes that used to hang memfuse, silence its
alarms, write outside the workspace or break every later run. Each case is in-process against
the scripted store; the state folder is planted directly (the agent cannot reach it now, so
these stand for a legacy `.memfuse/`, a mistaken --state-dir, or anything else that got there).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

import pytest

from tests.fakes import World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
JOURNAL = "## 09:30\n- Met Bob about the billing migration\n- Shipped the login fix today\n"

# A trigger and a view whose query never ends (a recursive CTE without a bound).
FOREVER = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT max(x) FROM n"


def plant_ledger(path: Path, kind: str) -> None:
    db = sqlite3.connect(path)
    if kind == "trigger":
        db.executescript(
            "CREATE TABLE entries (position TEXT PRIMARY KEY, day TEXT NOT NULL, content_hash"
            " TEXT NOT NULL, outcome TEXT NOT NULL, uri TEXT, memory_type TEXT, memory_id TEXT,"
            " created INTEGER NOT NULL DEFAULT 0, synced_at TEXT NOT NULL);"
            f" CREATE TRIGGER t BEFORE INSERT ON entries BEGIN SELECT ({FOREVER}); END;"
        )
    else:  # `entries` a view over the endless query
        db.executescript(f"CREATE VIEW entries AS {FOREVER};")
    db.close()


@pytest.mark.parametrize("kind", ["trigger", "view"])
@pytest.mark.parametrize("name", ["ledger.sqlite3", "recall.sqlite3"])
def test_a_planted_sqlite_file_is_moved_aside_not_run(world: World, kind: str, name: str) -> None:
    """Before: sync never returned (and held the lock, so every later run exited 75)."""
    world.journal(DAY, JOURNAL)
    world.state.mkdir(parents=True, mode=0o700)
    plant_ledger(world.state / name, kind)
    assert world.json("status", "-q", "--now", NOW).code in (0, 4)  # it answers, never hangs
    out = world.json("sync", "--now", NOW)
    assert out.code == 0, out.stderr
    assert out.data["counts"]["added"] == 2
    assert any("moved aside" in w and name in w for w in out.envelope["warnings"])
    assert world.json("recall", "billing", "--now", NOW).data["results"]
    again = world.json("sync", "--date", DAY, "--now", NOW)
    assert (again.code, again.data["counts"]["unchanged"]) == (0, 2)


def test_a_history_made_unreadable_does_not_silence_escalation(world: World) -> None:
    """Before: `mkdir .memfuse/runs.json` turned `0 0 4 4 4` into `0 0 0 0 0`, silently."""
    world.journal(DAY, JOURNAL)
    world.gateway.down = "missing"
    world.state.mkdir(parents=True, mode=0o700)
    (world.state / "runs.json").mkdir()
    codes = [world.run("sync", "-q", "--now", f"{DAY}T1{n}:00").code for n in range(5)]
    assert codes == [4, 0, 4, 4, 4]  # the unreadable history first, then the store's streak


def test_hard_links_in_the_state_folder_never_write_outside(world: World, decoy: Path) -> None:
    """Before: a hard-linked `lock` rewrote an outside file; `memfuse.log` appended to one."""
    world.journal(DAY, JOURNAL)
    state = world.state
    state.mkdir(parents=True, mode=0o700)
    outside = {name: decoy / f"precious-{name}" for name in ("lock", "memfuse.log", "runs.json")}
    for name, target in outside.items():
        target.write_text(f"the user's own {name}\n")
        os.link(target, state / name)
    out = world.json("sync", "--now", NOW)
    assert out.code in (0, 4), out.stderr  # 4: the history it could not read is an alarm
    for name, target in outside.items():
        assert target.read_text() == f"the user's own {name}\n", name
        assert os.stat(state / name).st_nlink == 1, name  # a file of memfuse's own now
    assert world.json("sync", "--now", NOW).code == 0


def test_a_state_folder_swapped_for_a_link_mid_run_gets_no_write(
    world: World, tmp_path: Path
) -> None:
    """Before: swapping `.memfuse` for a link while a sync ran made the recall index write the
    journal's text into the folder the link pointed to (and delete the file there)."""
    world.journal(DAY, JOURNAL)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("the user's file\n")
    state = world.state

    swapping = threading.Lock()  # remember calls run on several threads at once

    def swap(tool: str, _arguments: object) -> None:
        with swapping:
            if tool == "remember" and not (state.parent / "moved").exists():
                state.rename(state.parent / "moved")
                state.symlink_to(elsewhere)

    world.gateway.hook = swap
    out = world.json("sync", "--now", NOW)
    assert out.code == 0, out.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == ["notes.txt"]
    assert (elsewhere / "notes.txt").read_text() == "the user's file\n"
    index = sqlite3.connect(state.parent / "moved" / "recall.sqlite3")  # written where opened
    assert index.execute("SELECT count(*) FROM docs").fetchone() == (2,)
    index.close()


@pytest.mark.parametrize("plant", ["lock is a folder", "log is a dangling link", "junk ledger",
                                   "a -wal folder"])  # fmt: skip
def test_a_one_time_plant_costs_one_warning_not_every_later_run(world: World, plant: str) -> None:
    """Before: each of these made every sync exit 1 until a person cleaned up."""
    world.journal(DAY, JOURNAL)
    state = world.state
    state.mkdir(parents=True, mode=0o700)
    if plant == "lock is a folder":
        (state / "lock").mkdir()
    elif plant == "log is a dangling link":
        (state / "memfuse.log").symlink_to(state / "nowhere")
    elif plant == "junk ledger":
        (state / "ledger.sqlite3").write_bytes(os.urandom(8192))
    else:
        (state / "ledger.sqlite3-wal").mkdir()
    out = world.json("sync", "--now", NOW)
    assert out.code == 0, out.stderr
    assert any("moved aside" in w for w in out.envelope["warnings"])
    for at in ("23:00", "23:30"):
        later = world.json("sync", "--now", f"{DAY}T{at}")
        assert later.code == 0, later.stderr
        assert later.envelope["warnings"] == []


def test_look_alike_journal_names_never_shadow_the_real_one(world: World) -> None:
    """Before: a name in other digits (or with a trailing newline) took the real journal's
    place: 10 bullets never synced, no warning."""
    world.journal(DAY, "".join(f"- Real bullet number {n} of the day\n" for n in range(10)))
    memory = world.workspace / "memory"
    for name in ("２０２６-１１-２９.md", "٢٠٢٦-١١-٢٩.md", f"{DAY}.md\n", f"{DAY}.MD"):
        (memory / name).write_text("- a decoy bullet\n")
    out = world.json("sync", "--now", NOW)
    assert out.data["counts"]["added"] == 10
    stored = world.gateway.journal_uris().values()
    assert "a decoy bullet" not in stored
    odd = [w for w in out.envelope["warnings"] if "reads like a journal but is not one" in w]
    assert len(odd) == 4
    doctor = world.json("doctor", "--now", NOW)
    journals = next(c for c in doctor.data["checks"] if c["name"] == "journals")
    assert not journals["ok"] and "4 name(s) read like a journal" in journals["detail"]


ESCAPES = {
    "osc52": "\x1b]52;c;ZWNobyBwd25lZA==\x07",  # write the clipboard
    "osc8": "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",  # a hidden link
    "clear": "\x1b[2J\x1b[H",  # wipe the screen
    "rlo": "\u202eexe.txt",  # reorder what a person reads
    "c1": "\x9b31m",  # an 8-bit CSI
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_terminal_escapes_in_a_bullet_are_shown_not_obeyed(world: World, name: str) -> None:
    sequence = ESCAPES[name]
    world.journal(DAY, f"- Met Bob about billing {sequence} tomorrow\n")
    assert world.run("sync", "--now", NOW).code == 0
    for argv in (("recall", "billing"), ("surface", "--stdout"), ("sync", "--explain", "--all")):
        out = world.run(*argv, "--now", NOW)
        shown = out.stdout + out.stderr
        assert not any(ch in shown for ch in "\x1b\x07\x9b\u202e"), (argv, shown)
        assert "Met Bob about billing" in out.stdout, argv
    envelope = world.json("recall", "billing", "--now", NOW)
    assert any(sequence in r["content"] for r in envelope.data["results"])  # JSON: exact
    assert not any(ch in envelope.stdout for ch in "\x1b\x07\x9b\u202e")


@pytest.mark.parametrize(
    ("started", "said"), [("2099-01-01T00:00:00+00:00", "after now"), ("2026-11-01T00:00:00", "")]
)
def test_a_history_dated_in_the_future_or_without_a_zone_is_an_alarm(
    world: World, started: str, said: str
) -> None:
    """Before: a run dated 2099 silenced `no run since` for good; one without a zone made
    every sync crash in its assessment, so the history was never replaced."""
    world.journal(DAY, JOURNAL)
    world.state.mkdir(parents=True, mode=0o700)
    record = {"started": started, "duration_ms": 5, "status": "ok", "exit_code": 0,
              "store": "ok"}  # fmt: skip
    planted = {name: [{**record, "command": name}] for name in ("sync", "surface", "tidy")}
    (world.state / "runs.json").write_text(json.dumps(planted))
    status = world.json("status", "-q", "--now", "2026-12-20T12:00")
    assert status.code == 4, status.stdout
    assert said in status.stdout + json.dumps(status.envelope)
    out = world.json("sync", "--now", NOW)
    assert out.code in (0, 4), out.stderr  # it runs, and it records itself
    assert out.data["counts"]["added"] == 2


def test_a_ledger_in_the_workspaces_old_state_folder_is_never_read(world: World) -> None:
    """Issue 48: the state kept in `<workspace>/.memfuse/` by builds before 0.1.0 is no longer
    imported — the agent can write there, and the store's record rebuilds the ledger. A row
    planted there saying a bullet was withdrawn no longer keeps it out of the store."""
    from memfuse.ledger.ledger import Entry, Ledger, content_hash
    from memfuse.state.folder import StateFolder

    text = "Shipped the login fix today"
    world.journal("2026-11-29", f"- {text}\n")
    planted = Ledger(StateFolder(world.workspace / ".memfuse"))
    try:
        row = Entry("2026-11-29#0000-1", "2026-11-29", content_hash(text), "withdrawn",
                    None, None, None, False, "2026-11-29T10:00:00+00:00")  # fmt: skip
        assert planted.adopt([row]) == 1
    finally:
        planted.close()
    before = (world.workspace / ".memfuse" / "ledger.sqlite3").read_bytes()
    synced = world.json("sync", "--now", "2026-11-29T22:00")
    assert synced.code == 0, synced.stderr
    assert synced.data["counts"]["added"] == 1
    assert "state moved" not in synced.stderr
    assert (world.workspace / ".memfuse" / "ledger.sqlite3").read_bytes() == before
