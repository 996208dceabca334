"""Issue 46: a note is all or nothing, appears once whatever saves beside it, and touches the
journal's tail only. The failing disk and the racing editor are injected through the note's
`write` (os.write's shape); the bytes read are counted through its `read` (os.pread's)."""

from __future__ import annotations

import errno
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memfuse.workspace.journal import parse_bytes
from memfuse.workspace.layout import Workspace
from memfuse.workspace.note import NoteRefused, append_note
from memfuse.workspace.note_file import Marks
from tests.conftest import examples
from tests.fakes import World, state_of
from tests.unit.flows.test_serve_flow import DAY, JOURNAL

AT = datetime(2026, 11, 29, 22, 5, tzinfo=UTC)


def journal_of(world: World) -> Path:
    return world.workspace / "memory" / f"{DAY}.md"


def workspace_of(world: World) -> Workspace:
    return Workspace(world.workspace, state_of(world.workspace))


# --- all or nothing ----------------------------------------------------------------------


def test_a_note_the_disk_fills_under_is_taken_back_byte_for_byte(world: World) -> None:
    """The hostile pass's 64 KiB filesystem: part of the note is written, then ENOSPC. The
    journal is what it was, and the next note starts clean."""
    world.journal(DAY, JOURNAL)
    journal = journal_of(world)
    before = journal.read_bytes()

    fitted: list[int] = []

    def full_disk(fd: int, data: bytes) -> int:
        if not fitted:  # the part that fitted: the kernel says how much, the next call fails
            fitted.append(os.write(fd, data[: len(data) // 2]))
            return fitted[0]
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(NoteRefused, match="No space left on device; nothing written"):
        append_note(workspace_of(world), "Storm note 0648 the vendor budget", AT,
                    write=full_disk)  # fmt: skip
    assert journal.read_bytes() == before
    append_note(workspace_of(world), "After the storm", AT)
    after = journal.read_bytes()
    assert after.startswith(before) and after.endswith(b"\n## 22:05\n- After the storm\n")
    assert b"Storm" not in after


def test_a_short_write_then_a_full_disk_is_taken_back_too(world: World) -> None:
    """os.write's own way: a short count first, the error on the next call."""
    world.journal(DAY, JOURNAL)
    journal = journal_of(world)
    before = journal.read_bytes()
    calls: list[int] = []

    def short_then_full(fd: int, data: bytes) -> int:
        calls.append(1)
        if len(calls) == 1:
            return os.write(fd, data[:7])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(NoteRefused, match="nothing written"):
        append_note(workspace_of(world), "A note cut at seven bytes", AT, write=short_then_full)
    assert len(calls) == 2 and journal.read_bytes() == before


def test_a_failed_fsync_takes_the_note_back(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    world.journal(DAY, JOURNAL)
    journal = journal_of(world)
    before = journal.read_bytes()

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(NoteRefused, match="Input/output error; nothing written"):
        append_note(workspace_of(world), "Not on disk", AT)
    monkeypatch.undo()
    assert journal.read_bytes() == before


def test_a_failed_note_never_cuts_what_another_writer_appended_after_it(world: World) -> None:
    """Taking a note back cuts only the note's own bytes: when the agent appended after the
    part that was written, both stay, and the answer says so rather than "nothing written"."""
    world.journal(DAY, JOURNAL)
    journal = journal_of(world)

    calls: list[int] = []

    def part_then_the_agent(fd: int, data: bytes) -> int:
        calls.append(1)
        if len(calls) == 1:
            return os.write(fd, data[:5])  # a short write; the next call fails
        with journal.open("a") as fh:
            fh.write("- the agent's line\n")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(NoteRefused, match="another writer appended after the note's part"):
        append_note(workspace_of(world), "Cut short", AT, write=part_then_the_agent)
    assert journal.read_text().endswith("- the agent's line\n")


def test_a_note_that_wrote_nothing_cuts_nothing_not_even_the_same_note_by_another(
    world: World,
) -> None:
    """Review of issue 46: a second process noted the same text a moment before, and this
    note's write failed at once (ENOSPC, nothing of it written). Everything past the size read
    was a prefix of this note's bytes — the other's note — so the take-back cut it, after the
    other had answered that it landed."""
    world.journal(DAY, JOURNAL)
    journal = journal_of(world)
    before = journal.read_bytes()

    def the_other_first(fd: int, data: bytes) -> int:
        with journal.open("ab") as fh:  # the same note, by another serving process
            fh.write(data)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(NoteRefused, match="nothing written"):
        append_note(workspace_of(world), "Same words", AT, write=the_other_first)
    after = journal.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert [b.text for b in parse_bytes(after).bullets][-1] == "Same words"


# --- once ----------------------------------------------------------------------------------


def test_an_editors_rename_that_carries_the_note_does_not_get_it_twice(world: World) -> None:
    """The hostile pass's race, made certain: the editor reads the journal just after the note's
    write (so its copy holds the note), adds its own line and renames it into place before the
    note checks the inode. The note is there once, and the editor's line too."""
    world.journal(DAY, JOURNAL)
    journal = journal_of(world)

    def editor_after_write(fd: int, data: bytes) -> int:
        written = os.write(fd, data)
        temp = journal.with_name(".editor.tmp")
        temp.write_bytes(journal.read_bytes() + b"- the editor's own line\n")
        temp.replace(journal)
        return written

    noted = append_note(workspace_of(world), "Once only", AT, write=editor_after_write)
    text = journal.read_text()
    assert text.count("- Once only\n") == 1 and "- the editor's own line\n" in text
    bullets = parse_bytes(journal.read_bytes()).bullets
    assert noted.bullet in bullets and noted.bullet.text == "Once only"


def test_an_editor_saving_by_rename_all_the_while_never_doubles_a_note(world: World) -> None:
    """An editor saves the journal by temp file and rename over and over while notes are
    written: no note is in the journal twice, and no line of the editor's is lost."""
    world.journal(DAY, JOURNAL)
    journal = journal_of(world)
    workspace = workspace_of(world)
    marks = Marks()
    done = threading.Event()

    def editor() -> None:
        for i in range(150):
            temp = journal.with_name(f".editor.{i}.tmp")
            temp.write_bytes(journal.read_bytes() + f"- editor line {i}\n".encode())
            temp.replace(journal)
        done.set()

    saving = threading.Thread(target=editor)
    saving.start()
    written = 0
    while not done.is_set() or written < 20:
        try:
            append_note(workspace, f"note number {written}", AT, marks=marks)
        except NoteRefused:
            continue
        written += 1
    saving.join()
    text = journal.read_text()
    assert all(text.count(f"- note number {n}\n") <= 1 for n in range(written))
    assert all(f"- editor line {i}\n" in text for i in range(150))


# --- the tail only -------------------------------------------------------------------------


class Counting:
    """os.pread, counting the bytes it returns."""

    def __init__(self) -> None:
        self.bytes = 0

    def __call__(self, fd: int, size: int, offset: int) -> bytes:
        got = os.pread(fd, size, offset)
        self.bytes += len(got)
        return got


def big_journal(world: World, sections: int = 100) -> bytes:
    body = "".join(
        f"## {h % 20:02d}:{m:02d}\n"
        + "".join(f"- item {h}-{m}-{k} {'x' * 60}\n" for k in range(30))
        for h in range(sections // 20)
        for m in range(20)
    )
    world.journal(DAY, "# Journal\n\n" + body)
    return journal_of(world).read_bytes()


def test_a_note_after_a_note_reads_the_tail_only_and_places_as_a_whole_reading_does(
    world: World,
) -> None:
    raw = big_journal(world)
    assert len(raw) > 200_000  # a thousand times what a note after a note reads
    journal, workspace, marks = journal_of(world), workspace_of(world), Marks()
    first = Counting()
    append_note(workspace, "First note of the evening", AT, marks=marks, read=first)
    assert first.bytes == len(raw)  # the first note of a process reads the file once
    with journal.open("a") as fh:  # the agent's own lines, appended between notes
        fh.write("- the agent's line\n\n## 22:06\n- another\n")
    for n, at in enumerate((AT, AT.replace(minute=7), AT.replace(hour=23, minute=1))):
        counted = Counting()
        noted = append_note(workspace, f"Tail note {n}", at, marks=marks, read=counted)
        assert counted.bytes < 200  # from the last note's line on, not the file
        whole = parse_bytes(journal.read_bytes()).bullets
        assert whole[-1] == noted.bullet  # its section, count and line as the whole file's
    assert journal.read_text().endswith("- Tail note 1\n\n## 23:01\n- Tail note 2\n")


def test_an_open_fence_appended_after_the_last_note_is_still_refused_with_its_line(
    world: World,
) -> None:
    world.journal(DAY, JOURNAL)
    journal, workspace, marks = journal_of(world), workspace_of(world), Marks()
    append_note(workspace, "Before the fence", AT, marks=marks)
    with journal.open("a") as fh:
        fh.write("- a bullet\n```\ncode the agent never closed\n")
    lines = journal.read_text().count("\n")
    before = journal.read_bytes()
    with pytest.raises(NoteRefused, match=f"code fence opened at line {lines - 1} "):
        append_note(workspace, "Into the fence?", AT, marks=marks)
    assert journal.read_bytes() == before


def test_a_journal_replaced_since_the_last_note_is_read_whole_again(world: World) -> None:
    world.journal(DAY, JOURNAL)
    journal, workspace, marks = journal_of(world), workspace_of(world), Marks()
    append_note(workspace, "One", AT, marks=marks)
    temp = journal.with_name(".saved.tmp")
    temp.write_bytes(journal.read_bytes().replace(b"- One\n", b"```\n- One\n"))
    temp.replace(journal)  # an editor's save: another file, a fence above the last note
    counted = Counting()
    with pytest.raises(NoteRefused, match="code fence"):
        append_note(workspace, "Two", AT, marks=marks, read=counted)
    assert counted.bytes == len(journal.read_bytes())


def test_a_utf16_crlf_journal_reads_its_tail_in_its_own_encoding(world: World) -> None:
    journal = journal_of(world)
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_bytes("# Journal\r\n\r\n## 22:00\r\n- 第一\r\n".encode("utf-16"))
    workspace, marks = workspace_of(world), Marks()
    append_note(workspace, "二", AT, marks=marks)
    counted = Counting()
    noted = append_note(workspace, "三", AT, marks=marks, read=counted)
    assert counted.bytes < 40
    whole = parse_bytes(journal.read_bytes()).bullets
    assert [b.text for b in whole] == ["第一", "二", "三"] and whole[-1] == noted.bullet
    assert journal.read_bytes().decode("utf-16").endswith("- 二\r\n- 三\r\n")


LINES = [
    "- plain {i}", "* star {i}", "+ plus {i}", "1. numbered {i}", "3) numbered {i}",
    "  - nested {i}", "lazy continuation {i}", "", "", "## 22:0{d}", "### misc", "# Title",
    "> quoted {i}", "> - quoted item {i}", "    indented code {i}", "```", "~~~", "<div>",
    "</div>", "<!-- a comment -->", "<!--", "-->", "Setext {i}", "---", "===", "<style>",
    "</style>", "- [ ] task {i}", "\t- tab item {i}", "- ", "<!-- openclaw:dreaming:light:start -->",
    "<!-- openclaw:dreaming:light:end -->", "[ref]: /x", "      deep text {i}",
]  # fmt: skip


def test_the_tail_reading_answers_as_the_whole_reading_whatever_the_agent_appends(
    world: World,
) -> None:
    """Notes with the agent's own lines between them — every block CommonMark has, open and
    closed, a missing last newline: each note read on the tail is the whole file's last
    bullet, at the same place, and a note the tail refuses the whole file refuses too."""
    import random

    rng = random.Random(46)
    journal, workspace, marks = journal_of(world), workspace_of(world), Marks()
    world.journal(DAY, "# Journal\n\n## 22:00\n- first\n")
    taken = refused = tails = 0
    steps = examples(200)
    for step in range(steps):
        lines = [
            rng.choice(LINES).format(i=step, d=rng.randrange(10)) for _ in range(rng.randrange(4))
        ]
        if lines:
            with journal.open("a") as fh:
                fh.write("\n".join(lines) + ("\n" if rng.random() < 0.9 else ""))
        at = AT.replace(minute=rng.randrange(10))
        counted, size = Counting(), journal.stat().st_size
        if rng.random() < 0.2:
            marks = Marks()  # a new process: the whole file, read back from its last bullet
        try:
            noted = append_note(workspace, f"note {step}", at, marks=marks, read=counted)
        except NoteRefused:
            refused += 1
            before = journal.read_bytes()
            with pytest.raises(NoteRefused):
                append_note(workspace, f"note {step}", at)  # no marks: the whole file
            assert journal.read_bytes() == before
            continue
        taken += 1
        tails += counted.bytes < size
        assert parse_bytes(journal.read_bytes()).bullets[-1] == noted.bullet, step
    assert taken > steps // 4 and refused > steps // 40 and tails > taken // 2  # mostly the tail


def test_a_new_process_reads_the_tail_from_the_mark_the_state_folder_keeps(world: World) -> None:
    """An MCP client starts `serve` a session: the state folder keeps the last note's mark, so
    the next process's first note reads the tail too. What the folder holds is a hint, checked
    against the file: one that does not parse as marks is as none."""
    from memfuse.state.folder import StateFolder
    from memfuse.workspace.note_file import MARKS_FILE

    big_journal(world, sections=100)
    journal, workspace = journal_of(world), workspace_of(world)
    state = StateFolder(state_of(world.workspace))
    append_note(workspace, "First, by one process", AT, marks=Marks(state))
    counted = Counting()
    noted = append_note(workspace, "Then by another", AT, marks=Marks(state), read=counted)
    assert counted.bytes < 100 and parse_bytes(journal.read_bytes()).bullets[-1] == noted.bullet
    for kept in (b"not json", b'{"x": {"dev": "nonsense"}}', b"[1, 2]"):
        state.write(MARKS_FILE, kept)
        counted = Counting()
        append_note(workspace, f"After {kept!r}", AT, marks=Marks(state), read=counted)
        assert counted.bytes == journal.stat().st_size - len(f"- After {kept!r}\n".encode())


def test_a_new_process_reads_its_marks_when_made_not_at_its_first_note(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 57: a fresh serve's first note read and checked the marks file (JSON, a count
    for each of 1 400 sections at 8 MiB). The marks are read when `Marks` is made (serve's
    start-up, before any request): the first note reads the journal's tail and nothing of
    the state folder."""
    from memfuse.state.folder import StateFolder

    big_journal(world, sections=20)
    journal, workspace = journal_of(world), workspace_of(world)
    state = StateFolder(state_of(world.workspace))
    append_note(workspace, "First, by one process", AT, marks=Marks(state))
    marks = Marks(state)  # the next process's start-up
    monkeypatch.setattr(StateFolder, "read", lambda *_: pytest.fail("the marks read again"))
    counted = Counting()
    noted = append_note(workspace, "Then by another", AT, marks=marks, read=counted)
    assert counted.bytes < 100 and parse_bytes(journal.read_bytes()).bullets[-1] == noted.bullet


SHAPES = {
    # one section of 1 000 `-` items: on main, past 900 a note dropped its mark (issue 57)
    "one section": "# Journal\n\n## 22:00\n" + "- item\n" * 1000,
    # the 1001st `-` item meets the numbered items' 1001: the reader's Places bump it
    "numbered, then bumped": "# Journal\n\n## 22:00\n1. numbered\n" + "- item\n" * 850,
    "numbered among many": "## 22:00\n"
    + "".join(f"{'1.' if n % 7 == 0 else '-'} item {n}\n" for n in range(1100)),
    "one key in two sections": "## 22:00\n"
    + "- a\n" * 700
    + "## 21:00\n- b\n## 22:00\n"
    + "3. c\n" * 5
    + "- d\n" * 600,
    "no heading": "- bare\n" * 1000,
}


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_a_note_reads_the_tail_only_in_any_section_shape_and_counts_as_the_reader(
    world: World, shape: str
) -> None:
    """Issue 57: a section of 900 items or more dropped the tail mark, so every note read and
    parsed the whole journal (seconds at 8 MiB). The tail is now counted on as the reader's
    Places count, whatever the shape: each note reads only from the last one's line, and is
    the bullet the whole file's reading gives, at the same position."""
    world.journal(DAY, SHAPES[shape])
    journal, workspace, marks = journal_of(world), workspace_of(world), Marks()
    noted = [append_note(workspace, "note 0", AT, marks=marks).bullet]
    for n in range(1, 4):
        with journal.open("a") as fh:  # the agent's own lines, across the 1000th item
            fh.write("".join(f"{'2.' if k % 9 == 0 else '-'} agent {n}-{k}\n" for k in range(90)))
        counted = Counting()
        noted.append(append_note(workspace, f"note {n}", AT, marks=marks, read=counted).bullet)
        assert counted.bytes < 2000, counted.bytes  # the last note's line on, not the file
    # what is appended after a bullet changes nothing of it: the whole file read once, at the
    # end, places each note as a reading right after it would (the last of its file)
    whole = parse_bytes(journal.read_bytes()).bullets
    assert whole[-1] == noted[-1]
    assert [b for b in whole if b.text.startswith("note ")] == noted


def test_a_mark_read_back_is_refused_where_the_file_cannot_check_it(world: World) -> None:
    """Review of issue 46: the inode and the line's bytes are checked against the file, but a
    mark read from the state folder also says where to read from and in what encoding. One
    saying `start: -1` refused every note of the day ('Invalid argument'), and one saying
    `utf-7` wrote the note in UTF-7 into a UTF-8 journal ('café' as 'caf+AOk-'). A mark whose
    fields no note writes is as none: the file is read whole."""
    import json

    from memfuse.state.folder import StateFolder
    from memfuse.workspace.note_file import MARKS_FILE

    big_journal(world, sections=20)
    journal, workspace = journal_of(world), workspace_of(world)
    state = StateFolder(state_of(world.workspace))
    append_note(workspace, "First, by one process", AT, marks=Marks(state))
    kept = json.loads(state.read(MARKS_FILE, 1 << 20))
    (where,) = kept
    for field, value in [("start", -1), ("encoding", "utf-7"), ("line", -5), ("line", 0)]:
        state.write(MARKS_FILE, json.dumps({where: {**kept[where], field: value}}).encode())
        text = f"Café + tea after {field}={value}"
        noted = append_note(workspace, text, AT, marks=Marks(state))
        bullets = parse_bytes(journal.read_bytes()).bullets
        assert bullets[-1] == noted.bullet and noted.bullet.text == text, (field, value)
        append_note(workspace, "Then another, on the fresh mark", AT, marks=Marks(state))


@pytest.mark.parametrize("process", ["same", "new"])
def test_a_mark_the_file_was_edited_under_in_place_is_not_trusted(
    world: World, process: str
) -> None:
    """Issue 57: the mark is the agent's to defeat — it writes the journal. An edit in place
    above the last note, the note's line left at its offset, passed the inode and seal checks:
    a fence opened above swallowed the next note (answered as a bullet, never synced), and a
    line made a bullet moved every count after it. Every byte before the mark is now checked
    against its digest: the file is read whole, the note refused or placed as the reader does."""
    from memfuse.state.folder import StateFolder

    prose, bullet = "Some prose here\n", "- Now a bullet!\n"
    world.journal(DAY, f"## 22:00\n- first\n{prose}" + "".join(f"- b{n}\n" for n in range(40)))
    journal, workspace = journal_of(world), workspace_of(world)
    state = StateFolder(state_of(world.workspace))
    marks = Marks(state)
    append_note(workspace, "note 0", AT, marks=marks)
    at = journal.read_bytes().index(prose.encode())
    with journal.open("r+b") as fh:  # the same inode, the same size, the seal in place
        fh.seek(at)
        fh.write(bullet.encode())
    again = marks if process == "same" else Marks(state)
    noted = append_note(workspace, "note 1", AT, marks=again)
    assert parse_bytes(journal.read_bytes()).bullets[-1] == noted.bullet
    assert noted.position.key == f"{DAY}#2200-44"  # first, the new bullet, 40, note 0, note 1
    before = journal.read_bytes()
    with journal.open("r+b") as fh:
        fh.seek(at)
        fh.write(b"```" + b"x" * (len(bullet) - 4) + b"\n")  # a fence opened above the mark
    with pytest.raises(NoteRefused, match="inside a code fence"):
        append_note(workspace, "note 2", AT, marks=marks if process == "same" else Marks(state))
    assert len(journal.read_bytes()) == len(before)  # nothing written
