"""The recall index takes what was appended to a journal (issue 46, decisions 352): after a
note, the next refresh re-reads the journal from its last section on, not the whole file, and
what it then holds is exactly what indexing the whole file afresh holds; an edit anywhere
before the end, a key held before, or a journal markdown-it must read is read whole. Counted
by the index's own counters (`RecallIndex.counted`), never timed."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Any

from memfuse.recall import tail
from memfuse.recall.index import RecallIndex
from memfuse.state.folder import StateFolder
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Workspace
from tests.fakes import FakeEmbedder

DAY = "2026-11-29"
TODAY = date(2026, 11, 29)
CLASSIFIER = Classifier((), ())
WORDS = "vendor budget storm deploy review ticket meeting dinner garage editor billing rent"


def big_journal(sections: int = 90, each: int = 9) -> str:
    """A journal past tail.TAIL_MIN: `sections` sections with distinct times."""
    words = WORDS.split()
    lines = []
    for s in range(sections):
        lines.append(f"## {s // 60 + 8:02d}:{s % 60:02d}")
        for b in range(each):
            chosen = " ".join(words[(s + b + k) % len(words)] for k in range(8))
            lines.append(f"- Note {s}.{b} about the {chosen} and what was decided then")
    text = "\n".join(lines) + "\n"
    assert len(text.encode()) > tail.TAIL_MIN
    return text


class Setup:
    def __init__(self, root: Path, text: str) -> None:
        self.root = root
        self.ws = root / "ws"
        (self.ws / "memory").mkdir(parents=True)
        self.journal = self.ws / "memory" / f"{DAY}.md"
        self.journal.write_text(text)
        self.index = RecallIndex(StateFolder(root / "state"))
        self.workspace = Workspace(self.ws, root / "state")

    def refresh(self, model: Any = None) -> int:
        return self.index.refresh(self.workspace, CLASSIFIER, print, model)

    def append(self, text: str) -> None:
        with self.journal.open("a") as f:
            f.write(text)

    def afresh(self) -> list[Any]:
        """What indexing the workspace whole, in a new index, holds."""
        other = self.root / f"fresh{len(list(self.root.iterdir()))}"
        index = RecallIndex(StateFolder(other))
        index.refresh(Workspace(self.ws, other), CLASSIFIER, print)
        held = contents(index)
        index.close()
        return held


def contents(index: RecallIndex) -> list[Any]:
    docs = index.db.execute("SELECT path, line, day, type, content FROM docs ORDER BY id")
    fts = index.db.execute("SELECT own, near1, near2, dates FROM bullets ORDER BY rowid")
    terms = index.db.execute("SELECT term, rows FROM terms WHERE rows > 0 ORDER BY term")
    (rows,) = index.db.execute("SELECT rows FROM files WHERE path LIKE 'memory/%'").fetchone()
    return [docs.fetchall(), fts.fetchall(), terms.fetchall(), rows]


def test_a_note_appended_is_read_from_the_fourth_last_bullet_on(tmp_path: Path) -> None:
    text = big_journal()
    setup = Setup(tmp_path, text)
    setup.refresh()
    assert setup.index.counted["whole"] == 1
    setup.index.counted.clear()
    note = "- Storm note 0648 about the vendor budget\n"
    setup.append(note)
    assert setup.refresh() == 1
    four = "".join(line + "\n" for line in text.splitlines()[-4:])
    # read: the last four bullets and the note; written: the last two (their neighbours
    # changed) and the note
    assert setup.index.counted == {"bytes": len((four + note).encode()), "rows": 3}
    assert contents(setup.index) == setup.afresh()
    found = setup.index.search("storm 0648", 5, TODAY)
    line = text.count("\n") + 1
    assert found[0].content == note[2:-1] and found[0].location == f"memory/{DAY}.md:{line}"


def test_many_notes_to_one_long_section_each_read_a_few_bullets(tmp_path: Path) -> None:
    setup = Setup(tmp_path, "## 09:00\n" + "".join(big_journal().splitlines(True)[1::10]) * 8)
    setup.refresh()
    for n in range(6):
        setup.index.counted.clear()
        setup.append(f"- Note number {n} on the garage\n" * (n % 3))  # none, one or two
        setup.refresh()
        assert setup.index.counted["whole"] == 0 and setup.index.counted["rows"] <= 2 + 2
        assert setup.index.counted["bytes"] < 1000
    assert contents(setup.index) == setup.afresh()


def test_appends_after_a_new_section_read_from_that_section(tmp_path: Path) -> None:
    setup = Setup(tmp_path, big_journal())
    setup.refresh()
    setup.append("\n## 23:59\n- Late thought on the garage\n")
    setup.refresh()
    setup.index.counted.clear()
    setup.append("- And another on the rent\n")
    setup.refresh()
    part = "## 23:59\n- Late thought on the garage\n- And another on the rent\n"
    assert setup.index.counted == {"bytes": len(part.encode()), "rows": 2}
    assert contents(setup.index) == setup.afresh()


def test_a_journal_touched_or_saved_as_it_was_is_not_read_whole(tmp_path: Path) -> None:
    text = big_journal()
    setup = Setup(tmp_path, text)
    setup.refresh()
    for change in (lambda: os.utime(setup.journal, (1, 1)), lambda: setup.journal.write_text(text)):
        setup.index.counted.clear()
        change()
        assert setup.refresh() == 1
        assert setup.index.counted["whole"] == 0 and setup.index.counted["rows"] == 2
    assert contents(setup.index) == setup.afresh()


def test_an_edit_before_the_end_is_read_whole(tmp_path: Path) -> None:
    text = big_journal()
    setup = Setup(tmp_path, text)
    setup.refresh()
    setup.index.counted.clear()
    # the same size and more: an append and an edit in the middle at once
    setup.journal.write_text(text.replace("Note 3.4 about", "Note 3.4 AB0UT", 1) + "- More\n")
    setup.refresh()
    assert setup.index.counted["whole"] == 1
    assert contents(setup.index) == setup.afresh()
    assert setup.index.search("ab0ut", 5, TODAY)[0].content.startswith("Note 3.4")


def test_what_the_tail_cannot_take_alone_is_read_whole(tmp_path: Path) -> None:
    setup = Setup(tmp_path, big_journal())
    setup.refresh()
    for added in (
        "## 08:03\n- A key held before: its neighbours are there\n",
        "- An item with an <!-- HTML comment --> in it\n",  # markdown-it's to read
        "- A line that ends in CR\r\n",
        "- No newline at the end",
    ):
        setup.index.counted.clear()
        setup.append(added)
        setup.refresh()
        assert setup.index.counted["whole"] == 1, added
        assert contents(setup.index) == setup.afresh(), added


def test_a_journal_replaced_by_a_longer_one_is_read_whole(tmp_path: Path) -> None:
    text = big_journal()
    setup = Setup(tmp_path, text)
    setup.refresh()
    setup.index.counted.clear()
    setup.journal.unlink()
    setup.journal.write_text("## 07:00\n- Written afresh\n" + text)
    setup.refresh()
    assert setup.index.counted["whole"] == 1
    assert contents(setup.index) == setup.afresh()


def test_with_meaning_only_the_appended_bullet_is_embedded(tmp_path: Path) -> None:
    setup = Setup(tmp_path, big_journal(sections=80))
    model = FakeEmbedder()
    setup.index.refresh(setup.workspace, CLASSIFIER, print, model, tail_budget())
    assert len(model.embedded) == 80 * 9
    model.embedded.clear()
    setup.append("- The vendor called back\n")
    setup.refresh(model)
    assert model.embedded == ["The vendor called back"]
    (held,) = setup.index.db.execute("SELECT count(*) FROM vectors").fetchone()
    assert held == 80 * 9 + 1  # the re-read section's texts kept their vectors


def tail_budget() -> Any:
    from memfuse.recall import vectors

    return vectors.EmbedBudget(10_000, 1e9)


def test_a_plain_part_reads_as_it_does_in_the_whole_file() -> None:
    from memfuse.workspace.journal import parse, plain_part

    whole = (
        "# Day\n- zero\n## 09:00 standup\n- a\n  more of a\n- b\nlazy line of b\n\n"
        "Some prose.\n    not code after prose\n- c\n  - nested in c\n## 10:30\n- d\n- e\n"
    )
    lines = whole.splitlines(keepends=True)
    everything = [(b.key, b.text, b.line) for b in parse(whole)]
    for n, line in enumerate(lines):
        if not line.startswith(("#", "- ")):
            continue
        key = "" if line.startswith("#") else next(k for k, _t, at in everything if at == n + 1)
        part = plain_part("".join(lines[n:]), key)
        assert part is not None
        assert [(b.key, b.text, b.line + n) for b in part] == [
            found for found in everything if found[2] > n
        ], line
    assert plain_part("- an item <!-- with a comment -->\n") is None  # markdown-it's to read
