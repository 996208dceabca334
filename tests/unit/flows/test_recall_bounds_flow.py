"""What one question and one refresh of the local recall index may cost (issue 33): a question
asks FTS5 for its rarest terms only, a refresh is one transaction, and a file is known by more
than its size and mtime."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from memfuse.recall import index as index_module
from memfuse.recall.index import RecallIndex
from memfuse.recall.terms import POSTINGS_MAX, TERMS_MAX, bounded
from memfuse.state.folder import StateFolder
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Workspace
from tests.fakes import World

TODAY = date(2026, 11, 29)
CLASSIFIER = Classifier((), ())


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / ".memfuse").mkdir(mode=0o700)
    return root


@pytest.fixture
def index(ws: Path) -> Iterator[RecallIndex]:
    opened = RecallIndex(Workspace(ws, ws.parent / "state").state)
    try:
        yield opened
    finally:
        opened.close()


def refresh(index: RecallIndex, ws: Path) -> int:
    return index.refresh(Workspace(ws, ws.parent / "state"), CLASSIFIER, print)


def statements(index: RecallIndex) -> list[str]:
    seen: list[str] = []
    index.db.set_trace_callback(seen.append)
    return seen


def found(index: RecallIndex, query: str) -> list[str]:
    return [hit.content for hit in index.search(query, 10, TODAY)]


# --- a question's terms ---------------------------------------------------------------------


def test_the_rarest_terms_are_kept_up_to_the_cap() -> None:
    terms = [f"t{n}" for n in range(500)]
    rows = {t: 500 - n for n, t in enumerate(terms)}  # the last term is the rarest
    kept = bounded(terms, rows)
    assert len(kept) == TERMS_MAX
    assert kept == [f"t{n}" for n in range(499, 499 - TERMS_MAX, -1)]


def test_terms_no_row_holds_cost_nothing_and_count_for_nothing() -> None:
    assert bounded(["typo", "billing", "typo", "cutover"], {"billing": 3, "cutover": 1}) == [
        "cutover",
        "billing",
    ]
    assert bounded(["nowhere"], {}) == []


def test_common_terms_are_cut_once_the_rows_they_hold_pass_the_budget() -> None:
    rows = {"rare": 10, "middling": POSTINGS_MAX // 2, "common": POSTINGS_MAX, "everywhere": 10**7}
    assert bounded(list(rows), rows) == ["rare", "middling"]


def test_a_question_of_common_words_only_still_asks_for_its_rarest() -> None:
    rows = {"deploy": 3 * POSTINGS_MAX, "staging": 2 * POSTINGS_MAX}
    assert bounded(["deploy", "staging"], rows) == ["staging"]


def test_a_question_of_500_terms_issues_a_bounded_match(ws: Path, index: RecallIndex) -> None:
    words = [f"w{n:03d}" for n in range(500)]
    lines = [f"- {' '.join(words[n : n + 5])} common\n" for n in range(0, 500, 5)]
    (ws / "memory" / "2026-11-28.md").write_text("".join(lines))
    refresh(index, ws)
    seen = statements(index)
    hits = index.search(" ".join(reversed(words)) + " common", 10, TODAY)
    assert hits
    match = [s for s in seen if " MATCH " in s]
    assert len(match) == 1
    assert 1 <= match[0].count('"') // 2 <= TERMS_MAX  # phrases asked, each quoted
    assert '"common"' not in match[0]  # held by every row: the rarest come first


def test_a_question_of_nothing_the_index_holds_asks_nothing(ws: Path, index: RecallIndex) -> None:
    (ws / "memory" / "2026-11-28.md").write_text("- Alpha bravo charlie\n")
    refresh(index, ws)
    seen = statements(index)
    assert index.search("zulu yankee", 10, TODAY) == []
    assert not [s for s in seen if " MATCH " in s]


def test_term_counts_follow_edits_and_deletions(ws: Path, index: RecallIndex) -> None:
    journal = ws / "memory" / "2026-11-28.md"
    journal.write_text("## 09:00\n- Alpha bravo\n## 10:00\n- Alpha charlie\n")
    refresh(index, ws)
    held = dict(index.db.execute("SELECT term, rows FROM terms").fetchall())
    assert held["alpha"] == 2 and held["bravo"] == 1 and held["d20261128"] == 2
    journal.write_text("## 09:00\n- Delta\n")
    refresh(index, ws)
    held = dict(index.db.execute("SELECT term, rows FROM terms").fetchall())
    assert "alpha" not in held and "bravo" not in held and held["delta"] == 1
    journal.unlink()
    refresh(index, ws)
    assert index.db.execute("SELECT count(*) FROM terms").fetchone() == (0,)


# --- one refresh, one transaction --------------------------------------------------------------


def test_a_refresh_of_many_files_commits_once(ws: Path, index: RecallIndex) -> None:
    for day in range(1, 29):
        (ws / "memory" / f"2026-11-{day:02d}.md").write_text(f"- note {day} of the month\n")
    (ws / "MEMORY.md").write_text("- A fact\n")
    seen = statements(index)
    assert refresh(index, ws) == 29
    (ws / "memory" / "2026-11-01.md").unlink()
    for day in range(2, 29):
        (ws / "memory" / f"2026-11-{day:02d}.md").write_text(f"- changed note {day}\n")
    assert refresh(index, ws) == 28
    assert [s for s in seen if s.startswith(("BEGIN", "COMMIT"))] == [
        "BEGIN IMMEDIATE",
        "COMMIT",
    ] * 2


def test_a_refresh_that_fails_part_way_leaves_the_index_as_it_was(
    ws: Path, index: RecallIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = ws / "memory" / "2026-11-27.md", ws / "memory" / "2026-11-28.md"
    first.write_text("- Alpha was the old plan\n")
    second.write_text("- Bravo was the old plan\n")
    refresh(index, ws)
    first.write_text("- Charlie is the new plan\n")
    second.write_text("- Delta is the new plan\n")
    real = index_module.rows_of
    read: list[Path] = []

    def failing(*args: object, **kwargs: object) -> object:
        read.append(args[1])  # type: ignore[arg-type]
        if len(read) == 2:
            raise OSError("the disk went away")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(index_module, "rows_of", failing)
    with pytest.raises(OSError, match="went away"):
        refresh(index, ws)
    assert len(read) == 2
    assert sorted(found(index, "alpha bravo charlie delta")) == [
        "Alpha was the old plan",  # the first file's new text, read before the failure, is not
        "Bravo was the old plan",
    ]
    monkeypatch.setattr(index_module, "rows_of", real)
    assert refresh(index, ws) == 2  # nothing of the failed one was kept: both are re-read
    assert sorted(found(index, "alpha bravo charlie delta")) == [
        "Charlie is the new plan",
        "Delta is the new plan",
    ]


def test_touched_empty_journals_are_not_opened(
    ws: Path, index: RecallIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    for day in range(1, 11):
        (ws / "memory" / f"2026-11-{day:02d}.md").touch()
    (ws / "memory" / "2026-11-11.md").write_text("- The one with words\n")
    workspace = Workspace(ws, ws.parent / "state")
    opened: list[Path] = []
    real = workspace.files.read
    monkeypatch.setattr(workspace.files, "read", lambda path: opened.append(path) or real(path))
    assert index.refresh(workspace, CLASSIFIER, print) == 11
    later = time.time() + 60
    for day in range(1, 11):
        os.utime(ws / "memory" / f"2026-11-{day:02d}.md", (later, later))
    assert index.refresh(workspace, CLASSIFIER, print) == 10
    assert opened == [ws / "memory" / "2026-11-11.md"]  # MEMORY.md is not there: never read
    assert found(index, "words") == ["The one with words"]


def test_a_refresh_frees_the_pages_of_what_it_dropped(ws: Path, index: RecallIndex) -> None:
    filler = "".join(f"- bullet {n} with enough words to fill a page or two\n" for n in range(200))
    for day in range(1, 11):
        (ws / "memory" / f"2026-11-{day:02d}.md").write_text(filler)
    refresh(index, ws)
    (pages,) = index.db.execute("PRAGMA page_count").fetchone()
    for day in range(2, 11):
        (ws / "memory" / f"2026-11-{day:02d}.md").unlink()
    assert refresh(index, ws) == 9
    assert index.db.execute("PRAGMA freelist_count").fetchone() == (0,)
    assert index.db.execute("PRAGMA page_count").fetchone()[0] < pages / 2


# --- what a file is known by -------------------------------------------------------------------


def edit_keeping_mtime(path: Path, text: str) -> None:
    """A same-size edit in place whose old mtime is put back (an editor, `rsync -t`)."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    while path.stat().st_ctime_ns == before.st_ctime_ns:  # a coarse clock has not ticked yet
        time.sleep(0.01)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_same_size_edit_with_its_old_mtime_put_back_is_reindexed(
    ws: Path, index: RecallIndex
) -> None:
    journal = ws / "memory" / "2026-11-28.md"
    journal.write_text("- Alpha bravo charlie\n")
    refresh(index, ws)
    edit_keeping_mtime(journal, "- Delta echo foxtrot!\n")
    assert refresh(index, ws) == 1
    assert found(index, "echo") == ["Delta echo foxtrot!"]
    assert found(index, "bravo") == []


def test_a_file_renamed_over_another_at_the_same_size_and_mtime_is_reindexed(
    ws: Path, index: RecallIndex
) -> None:
    journal = ws / "memory" / "2026-11-28.md"
    journal.write_text("- Alpha bravo charlie\n")
    refresh(index, ws)
    before = journal.stat()
    saved = ws / "memory" / ".2026-11-28.md.swp"
    saved.write_text("- Delta echo foxtrot!\n")
    os.utime(saved, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(saved, journal)  # a checkout, an editor's safe save
    assert (journal.stat().st_size, journal.stat().st_mtime_ns) == (
        before.st_size,
        before.st_mtime_ns,
    )
    assert refresh(index, ws) == 1
    assert found(index, "echo") == ["Delta echo foxtrot!"]


def test_a_deleted_memory_md_leaves_the_index(ws: Path, index: RecallIndex) -> None:
    (ws / "MEMORY.md").write_text("- Alice prefers dark mode\n")
    refresh(index, ws)
    assert found(index, "dark mode") == ["Alice prefers dark mode"]
    (ws / "MEMORY.md").unlink()
    assert refresh(index, ws) == 1
    assert found(index, "dark mode") == []


# An index of e40a25b's build: its tables without the tails, and MEMORY.md's rows read by the
# line pattern that took a fenced command and a comment's text for facts (issue 48).
E40A25B = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER, ctime_ns INTEGER, ino INTEGER, size INTEGER,
    days TEXT NOT NULL DEFAULT '', rows INTEGER NOT NULL DEFAULT 0
);
"""


@pytest.mark.parametrize("user_version", [0, 1])
def test_an_index_of_another_build_is_made_again_silently(ws: Path, user_version: int) -> None:
    """An upgrade re-reads the Markdown: an index another build made (its tables, or the same
    tables read by another reader) would keep MEMORY.md's old facts until the file changed."""
    (ws / "memory" / "2026-11-28.md").write_text("- Alpha bravo charlie\n")
    state = Workspace(ws, ws.parent / "state").state
    state.ensure()
    old = sqlite3.connect(state.recall_index)
    old.executescript(E40A25B if user_version == 0 else index_schema())
    old.execute(
        "INSERT INTO files (path, mtime_ns, ctime_ns, ino, size, days)"
        " VALUES ('memory/2026-11-28.md', 1, 1, 1, 2, '')"
    )
    old.execute(f"PRAGMA user_version = {user_version}")
    old.commit()
    old.close()
    index = RecallIndex(StateFolder(state.path))
    try:
        assert not index.rebuilt  # nothing to warn about: it was memfuse's own
        assert refresh(index, ws) == 1
        assert found(index, "bravo") == ["Alpha bravo charlie"]
    finally:
        index.close()


def index_schema() -> str:
    from memfuse.recall.index import SCHEMA

    return SCHEMA


# --- recall, when the refresh cannot be made -----------------------------------------------------


def test_recall_answers_from_the_index_as_it_was_when_it_cannot_refresh(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.journal("2026-11-28", "- Alice prefers dark mode in every editor\n")
    assert world.run("sync", "--now", "2026-11-29T22:00").code == 0

    def locked(*_args: object) -> int:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(RecallIndex, "refresh", locked)
    out = world.json("recall", "dark mode", "--now", "2026-11-29T22:00", "--without", "store")
    assert out.code == 0
    assert [r["location"] for r in out.data["results"]] == ["memory/2026-11-28.md:1"]
    assert [w for w in out.envelope["warnings"] if "was not refreshed" in w and "locked" in w]
