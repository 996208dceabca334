"""`memfuse serve`'s `note` tool, in-process: one bullet appended to today's journal as the
agent's own routine writes it, read back identically by the journal reader, found by the next
recall of the same session and sent by the next sync at the URI it answered; hostile text and
hostile journals refused with nothing written; another writer's change never lost."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from memfuse.run.lock import WorkspaceLock
from memfuse.state.folder import StateFolder
from memfuse.workspace.journal import parse_bytes
from memfuse.workspace.note import NOTE_MAX
from tests.fakes import World, state_of
from tests.unit.flows.test_serve_flow import DAY, JOURNAL, NOW, ok, service, synced

TODAY = f"memory/{DAY}.md"


def journal_of(world: World) -> Path:
    return world.workspace / "memory" / f"{DAY}.md"


def read_back(path: Path) -> list[Any]:
    return list(parse_bytes(path.read_bytes()).bullets)


def test_a_note_lands_under_the_current_section_and_reads_back_as_written(world: World) -> None:
    synced(world)
    journal = journal_of(world)
    with journal.open("a") as fh:
        fh.write("## 22:00 memory-sync\n- Wrote the weekly update\n")
    before = read_back(journal)
    served = service(world)
    text = "Decided: the **billing** cutover moves to `Saturday` — 周六 [plan](x.md) & co"
    got = ok(served.call("note", {"text": f"  {text}  "}))
    data = got["data"]
    assert data["file"] == TODAY and data["line"] == 8 and data["section"] == "22:00"
    assert data["made"] is None and data["text"] == text
    assert data["position"] == f"{DAY}#2200-2" and data["type"] == "knowledge"  # "Decided"
    assert data["uri"] == f"knowledge://journal/{DAY}#2200-2"
    after = read_back(journal)
    assert after[:-1] == before  # every bullet that was there, unchanged
    assert (after[-1].text, after[-1].line, after[-1].position) == (text, 8, "2200-2")
    assert journal.read_text().endswith(f"- Wrote the weekly update\n- {text}\n")
    assert f"{TODAY}:9" in got_text(served, {"text": "Second note of the evening"})


def got_text(served: Any, arguments: dict[str, Any]) -> str:
    answer = served.call("note", arguments)
    assert not answer.error, answer.text
    return str(answer.text)


def test_recall_in_the_same_session_finds_a_note_and_sync_sends_it_at_its_uri(
    world: World,
) -> None:
    synced(world)
    served = service(world)
    ok(served.call("recall", {"query": "billing"}))  # the index caught up before the note
    noted = ok(served.call("note", {"text": "Remember: the zeppelin hangar opens at nine"}))
    found = ok(served.call("recall", {"query": "zeppelin hangar"}))["data"]["results"]
    assert found[0]["content"] == "Remember: the zeppelin hangar opens at nine"
    assert found[0]["location"] == f"{noted['data']['file']}:{noted['data']['line']}"
    assert world.run("sync", "--now", NOW).code == 0
    uri = noted["data"]["uri"]
    assert uri.startswith("knowledge://journal/")  # "Remember" is a knowledge keyword
    assert world.gateway.journal_uris()[uri] == "Remember: the zeppelin hangar opens at nine"


def test_a_note_makes_the_journal_and_a_section_as_the_agents_routine_does(
    world: World,
) -> None:
    served = service(world)
    first = ok(served.call("note", {"text": "First note of the day"}))["data"]
    assert first["made"] == "journal" and first["line"] == 4
    assert journal_of(world).read_text() == "# Journal\n\n## 22:00\n- First note of the day\n"
    world.journal(DAY, JOURNAL)  # the agent's own journal, its last section at 14:00
    second = ok(served.call("note", {"text": "Late thought"}))["data"]
    assert second["made"] == "section" and second["position"] == f"{DAY}#2200-1"
    assert journal_of(world).read_text() == JOURNAL + "\n## 22:00\n- Late thought\n"


def test_a_journal_without_its_last_newline_keeps_its_last_bullet(world: World) -> None:
    world.journal(DAY, "## 22:00\n- The last line has no newline")
    got = ok(service(world).call("note", {"text": "A note after it"}))["data"]
    assert journal_of(world).read_text() == (
        "## 22:00\n- The last line has no newline\n- A note after it\n"
    )
    assert [b.text for b in read_back(journal_of(world))] == [
        "The last line has no newline", "A note after it",
    ]  # fmt: skip
    assert got["position"] == f"{DAY}#2200-2"


def test_a_utf16_journal_with_crlf_gets_the_note_in_its_own_encoding(world: World) -> None:
    path = journal_of(world)
    path.write_bytes("## 22:00\r\n- 已有的一条\r\n".encode("utf-16"))
    ok(service(world).call("note", {"text": "新的一条 note"}))
    raw = path.read_bytes()
    assert raw.decode("utf-16") == "## 22:00\r\n- 已有的一条\r\n- 新的一条 note\r\n"
    assert [b.text for b in read_back(path)] == ["已有的一条", "新的一条 note"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("# Heading", "a heading marker"),
        ("## 09:00 a new section", "a heading marker"),
        ("```python", "a code fence opener"),
        ("~~~", "a code fence opener"),
        ("- a nested list", "a list marker"),
        ("* star", "a list marker"),
        ("12. numbered", "a list marker"),
        ("> quoted", "a block quote marker"),
        ("<!-- hidden -->", "an HTML tag or comment"),
        ("<div>block</div>", "an HTML tag or comment"),
        ("text then <!-- a comment", "HTML comment marker"),
        ("a --> b", "HTML comment marker"),
        ("---", "a rule or heading underline"),
        ("first line\n## 09:00", "a line break"),
        ("carriage\rreturn", "a line break"),
        ("line\u2028separator", "a line break"),
        ("nul\x00byte", "a control character (U+0000)"),
        ("escape \x1b[2J", "a control character (U+001B)"),
        ("x" * (NOTE_MAX + 1), f"above the {NOTE_MAX} of one note"),
        ("   ", "text must be a non-empty string"),
        ("[a]: /b", "a link reference definition"),
        ("pay \u202eevil\u202c later", "an invisible format character (U+202E)"),
        ("zero\u200bwidth", "an invisible format character (U+200B)"),
    ],
)
def test_text_that_would_change_the_journals_structure_is_refused(
    world: World, text: str, says: str
) -> None:
    world.journal(DAY, JOURNAL)
    before = journal_of(world).read_bytes()
    answer = service(world).call("note", {"text": text})
    assert answer.error and answer.text.startswith("note: ") and says in answer.text
    assert journal_of(world).read_bytes() == before


@pytest.mark.parametrize(
    ("arguments", "says"),
    [({}, "text must be a non-empty string"), ({"text": 7}, "text must be a non-empty string"),
     ({"text": "x", "day": "2026-01-01"}, "no argument 'day'")],
)  # fmt: skip
def test_malformed_note_arguments_are_refused(
    world: World, arguments: dict[str, Any], says: str
) -> None:
    answer = service(world).call("note", arguments)
    assert answer.error and says in answer.text
    assert not journal_of(world).exists()


@pytest.mark.parametrize(
    ("tail", "says"),
    [
        ("```\ncode that never closes\n", "inside a code fence opened at line 6"),
        # a closing fence holds nothing after its marks: CommonMark's fence is still open
        ("```\ncode\n``` not a closer\n", "inside a code fence opened at line 6"),
        ("<!-- a comment\nthat never closes\n", "inside an HTML comment opened at line 6"),
    ],
)
def test_a_journal_ending_inside_an_open_fence_or_comment_is_refused(
    world: World, tail: str, says: str
) -> None:
    world.journal(DAY, JOURNAL + tail)
    before = journal_of(world).read_bytes()
    answer = service(world).call("note", {"text": "This would be swallowed"})
    assert answer.error and says in answer.text and "nothing written" in answer.text
    assert journal_of(world).read_bytes() == before


def test_a_journal_ending_in_an_html_block_gets_a_section_of_its_own(world: World) -> None:
    world.journal(DAY, "## 22:00\n- Before the block\n<details>\nsummary text")
    got = ok(service(world).call("note", {"text": "After the block"}))["data"]
    assert got["made"] == "section"
    assert [b.text for b in read_back(journal_of(world))] == ["Before the block", "After the block"]


def test_a_folder_a_hard_link_or_a_link_out_is_refused_and_nothing_outside_changes(
    world: World, tmp_path: Path
) -> None:
    served = service(world)
    journal = journal_of(world)
    journal.mkdir(parents=True)  # a folder where the journal should be
    answer = served.call("note", {"text": "Into a folder?"})
    assert answer.error and "is a directory" in answer.text
    journal.rmdir()

    outside = tmp_path / "outside.md"
    outside.write_text("## 22:00\n- a file outside the workspace\n")
    os.link(outside, journal)  # a second name for it inside
    answer = served.call("note", {"text": "Through a hard link?"})
    assert answer.error and "2 hard links" in answer.text
    journal.unlink()

    memory = world.workspace / "memory"
    memory.rmdir()
    memory.write_text("a file where the journals' folder should be")
    answer = served.call("note", {"text": "Into a file?"})
    assert answer.error and "cannot create" in answer.text and "nothing written" in answer.text
    memory.unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    memory.symlink_to(elsewhere)  # memory/ itself links out
    answer = served.call("note", {"text": "Through a linked folder?"})
    assert answer.error and "outside the workspace" in answer.text
    assert list(elsewhere.iterdir()) == []
    assert outside.read_text() == "## 22:00\n- a file outside the workspace\n"


def test_a_journal_above_the_read_cap_is_refused(world: World) -> None:
    from datetime import UTC, datetime

    from memfuse.workspace.layout import Workspace
    from memfuse.workspace.note import NoteRefused, append_note

    world.journal(DAY, JOURNAL + "- filler\n" * 200)
    workspace = Workspace(world.workspace, state_of(world.workspace), read_cap=1024)
    with pytest.raises(NoteRefused, match=r"above the .* read limit"):
        append_note(workspace, "One more", datetime(2026, 11, 29, 22, tzinfo=UTC))
    world.journal(DAY, "## 22:00\n- " + "x" * 1000 + "\n")  # under the cap; not with the note
    before = journal_of(world).read_bytes()
    with pytest.raises(NoteRefused, match=r"would pass the .* read limit with the note"):
        append_note(workspace, "y" * 100, datetime(2026, 11, 29, 22, tzinfo=UTC))
    assert journal_of(world).read_bytes() == before


def test_a_line_another_writer_appends_meanwhile_is_kept_and_the_note_lands_once(
    world: World,
) -> None:
    from datetime import UTC, datetime

    from memfuse.workspace.layout import Workspace
    from memfuse.workspace.note import append_note

    world.journal(DAY, JOURNAL)
    journal = journal_of(world)
    writes: list[int] = []

    def racing(fd: int, data: bytes) -> int:
        writes.append(1)
        if len(writes) == 1:  # between the read and the write: the agent appended meanwhile
            with journal.open("a") as fh:
                fh.write("- The agent's own line, written at the same moment\n")
        return os.write(fd, data)

    workspace = Workspace(world.workspace, state_of(world.workspace))
    noted = append_note(workspace, "The note", datetime(2026, 11, 29, 22, tzinfo=UTC),
                        write=racing)  # fmt: skip
    texts = [b.text for b in read_back(journal)]
    assert texts[-3:] == ["今天讨论了 billing 迁移的回滚步骤",
                          "The agent's own line, written at the same moment", "The note"]  # fmt: skip
    assert len(writes) == 1 and noted.bullet.line == 9  # found where it landed, not written twice


def test_a_journal_an_editor_keeps_saving_without_the_note_is_given_up_on(world: World) -> None:
    """Every try, an editor saves (temp + rename) a copy it read before the note's write: the
    note never stays in the journal, five tries are made, and every line of the editor's
    is kept."""
    from datetime import UTC, datetime

    from memfuse.workspace.layout import Workspace
    from memfuse.workspace.note import NoteRefused, append_note

    world.journal(DAY, JOURNAL)
    journal = journal_of(world)
    count: list[int] = []

    def stale_editor(fd: int, data: bytes) -> int:
        count.append(1)
        copy = journal.read_bytes() + f"- line {len(count)}\n".encode()
        written = os.write(fd, data)
        temp = journal.with_name(".edit.tmp")
        temp.write_bytes(copy)
        temp.replace(journal)
        return written

    workspace = Workspace(world.workspace, state_of(world.workspace))
    with pytest.raises(NoteRefused, match="kept changing"):
        append_note(workspace, "Never lands", datetime(2026, 11, 29, 22, tzinfo=UTC),
                    write=stale_editor)  # fmt: skip
    assert "Never lands" not in journal.read_text()
    assert journal.read_text().count("- line ") == 5  # every other writer's line kept


def test_a_writer_appending_all_the_while_loses_no_line(world: World) -> None:
    """The agent's own routine appends while notes are written (the hostile review lost 9 of
    3 000 lines to the rename): every line and every note stays."""
    import threading

    world.journal(DAY, JOURNAL)
    journal = journal_of(world)
    served = service(world)

    def agent() -> None:
        for i in range(300):
            with journal.open("a") as fh:
                fh.write(f"- agent line {i}\n")

    writer = threading.Thread(target=agent)
    writer.start()
    notes = 0
    while writer.is_alive() or notes < 5:
        if not served.call("note", {"text": f"note number {notes}"}).error:
            notes += 1
    writer.join()
    text = journal.read_text()
    assert all(f"- agent line {i}\n" in text for i in range(300))
    assert all(f"- note number {n}\n" in text for n in range(notes))


def test_a_note_lands_while_a_sync_holds_the_workspace(world: World) -> None:
    """Issue 46: a note waits for nothing longer than its append; a run holding the workspace
    lock (a long sync, which only reads journals) does not hold it up."""
    synced(world)
    with WorkspaceLock(StateFolder(state_of(world.workspace)), "sync"):
        got = ok(service(world).call("note", {"text": "While sync runs"}))
    assert got["data"]["text"] == "While sync runs"
    assert read_back(journal_of(world))[-1].text == "While sync runs"


def test_a_notes_day_and_hour_are_the_schedules_zone_not_the_gateways(world: World) -> None:
    """Issue 47: the Gateway starts `serve` in its own zone (UTC on a server); the schedule
    runs sync and surface in the zone its record names. A note's day and `## HH:MM` are that
    zone's."""
    import json
    from datetime import datetime
    from zoneinfo import ZoneInfo

    StateFolder(state_of(world.workspace)).write(
        "schedule.json", json.dumps({"format": "openclaw", "zone": "Asia/Shanghai"}).encode()
    )
    there = datetime.fromisoformat(NOW).astimezone().astimezone(ZoneInfo("Asia/Shanghai"))
    got = ok(service(world).call("note", {"text": "Noted on the schedule's clock"}))["data"]
    assert got["file"] == f"memory/{there:%Y-%m-%d}.md" and got["section"] == f"{there:%H:%M}"
    journal = world.workspace / got["file"]
    assert journal.read_text().endswith(f"## {there:%H:%M}\n- Noted on the schedule's clock\n")
