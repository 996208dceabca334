"""A cold process maps the vectors' file beside the index instead of reading every vector out
of it (issue 49, decisions 433-435): with the file recorded, a new process reads from the index
only the rows changed since it; a stale, truncated, replaced, planted or linked file is never
used (every row read from the index, the same answers) and is written again. Counted by the
index's own counters and compared with the load from the index alone, never timed."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memfuse.recall import matrix, paged, vectors
from memfuse.recall.index import RecallIndex
from memfuse.state.folder import StateFolder
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Workspace
from tests.fakes import FakeEmbedder

np = pytest.importorskip("numpy")

CLASSIFIER = Classifier((), ())
WORDS = "vendor budget storm deploy review ticket meeting dinner garage editor billing rent"
ALL = vectors.EmbedBudget(count=100_000, seconds=1e9)


class Setup:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = root / "ws"
        (self.ws / "memory").mkdir(parents=True)
        self.state = root / "state"
        self.workspace = Workspace(self.ws, self.state)
        self.model = FakeEmbedder()
        for day in range(1, 6):
            self.journal(day, 12)

    def journal(self, day: int, bullets: int, tag: str = "") -> Path:
        words = WORDS.split()
        lines = ["## 09:30"] + [
            f"- {tag}Day {day} note {b}: " + " ".join(words[(day + b + k) % 12] for k in range(6))
            for b in range(bullets)
        ]
        path = self.ws / "memory" / f"2026-11-{day:02d}.md"
        path.write_text("\n".join(lines) + "\n")
        return path

    def index(self) -> RecallIndex:
        """A new process's index."""
        return RecallIndex(StateFolder(self.state))

    def night(self, budget: vectors.EmbedBudget = ALL) -> None:
        """The night's tidy: refresh, embed, and write the file."""
        index = self.index()
        index.refresh(self.workspace, CLASSIFIER, print, self.model, budget)
        index.keep_vectors(model=self.model.name)
        assert index.counted["vector files"] == 1
        index.close()

    def question(self, budget: vectors.EmbedBudget = vectors.QUESTION) -> tuple[RecallIndex, Any]:
        """A cold question's index, refreshed as a question does, and its answer by meaning."""
        index = self.index()
        index.refresh(self.workspace, CLASSIFIER, print, self.model, budget)
        query = self.model.embed(["vendor budget review"], question=True)[0]
        return index, index.closest(query, 10, self.model.name)


def same_as_the_index_alone(index: RecallIndex, model: str) -> None:
    """What the index holds now, loaded the old way (every row read), against what it used."""
    used = index._loaded(model)
    alone = vectors.load(index.db, model)
    assert alone.made == -1 and alone.read == len(alone.ids) > 0
    assert used.ids == alone.ids
    assert np.array_equal(used.rows.vecs, alone.rows.vecs)
    query = alone.rows.vecs[len(alone.ids) // 2]
    assert np.array_equal(used.cosines(query), alone.cosines(query))
    assert np.array_equal(used.before, alone.before)
    assert np.array_equal(used.after, alone.after)


def answers(index: RecallIndex, model: FakeEmbedder) -> list[str]:
    query = model.embed(["vendor budget review"], question=True)[0]
    hits, _ = index.closest(query, 10, model.name)
    return [hit.location for hit in hits]


def test_a_cold_question_maps_the_file_and_reads_no_vector_row(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    setup.night()
    assert os.stat(setup.state / matrix.NAME).st_mode & 0o777 == 0o600
    index, (hits, _) = setup.question()
    assert hits and index.counted["vector rows read"] == 0
    assert index.counted["vector files"] == 0  # it was current: not written again
    loaded = index._loaded(setup.model.name)
    assert loaded.made == loaded.gen >= 1 and len(loaded.ids) == 60
    same_as_the_index_alone(index, setup.model.name)


def test_a_question_reads_only_what_changed_since_the_file(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    setup.night()
    setup.journal(6, 8, tag="new ")  # new rows: 4 get vectors from the question's budget
    setup.journal(2, 10, tag="edited ")  # rows deleted and written again
    (setup.ws / "memory" / "2026-11-05.md").unlink()  # the highest ids deleted ...
    index, _ = setup.question(vectors.EmbedBudget(count=4, seconds=1e9))
    loaded = index._loaded(setup.model.name)
    assert 0 < index.counted["vector rows read"] == loaded.read < 20
    same_as_the_index_alone(index, setup.model.name)
    setup.journal(7, 5, tag="later ")  # ... and given again: a reused id is read afresh
    index.close()
    index, _ = setup.question(ALL)
    assert 0 < index.counted["vector rows read"] < len(index._loaded(setup.model.name).ids)
    same_as_the_index_alone(index, setup.model.name)
    index.close()
    setup.night()  # the night writes the file again; the log of deletions is emptied
    index = setup.index()
    assert index.db.execute("SELECT count(*) FROM dropped").fetchone()[0] == 0
    answers(index, setup.model)
    assert index.counted["vector rows read"] == 0


def _truncate(path: Path, _old: bytes) -> None:
    os.truncate(path, path.stat().st_size - 100)


def _copied(path: Path, _old: bytes) -> None:  # the same bytes, another file
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)
    path.chmod(0o600)


def _rewritten_in_place(path: Path, _old: bytes) -> None:
    with path.open("r+b") as handle:
        handle.seek(-1, os.SEEK_END)
        handle.write(b"\x7f")


def _older_file_put_back(path: Path, old: bytes) -> None:
    path.unlink()
    path.write_bytes(old)
    path.chmod(0o600)


def _linked(path: Path, _old: bytes) -> None:
    elsewhere = path.parent.parent / "elsewhere.bin"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)


def _planted_folder(path: Path, _old: bytes) -> None:
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize(
    "tamper",
    [_truncate, _copied, _rewritten_in_place, _older_file_put_back, _linked, _planted_folder],
)
def test_a_file_not_the_one_recorded_is_not_used_and_is_written_again(
    tmp_path: Path, tamper: Any
) -> None:
    setup = Setup(tmp_path)
    setup.night()
    file = setup.state / matrix.NAME
    old = file.read_bytes()
    setup.journal(6, 30, tag="more ")
    setup.night()  # a newer file, of a later generation
    fresh = setup.index()
    expected = answers(fresh, setup.model)
    assert fresh.counted["vector rows read"] == 0
    fresh.close()
    tamper(file, old)
    index = setup.index()
    assert answers(index, setup.model) == expected
    total = len(index._loaded(setup.model.name).ids)
    assert index.counted["vector rows read"] == total == 90  # all from the index
    assert index.counted["vector files"] == 1  # and the file written again
    same_as_the_index_alone(index, setup.model.name)
    index.close()
    again = setup.index()
    assert answers(again, setup.model) == expected
    assert again.counted["vector rows read"] == 0


def test_a_file_of_another_generation_than_recorded_is_not_used(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    setup.night()
    db = sqlite3.connect(setup.state / "recall.sqlite3")
    with db:
        db.execute("UPDATE matrix SET made = made - 1")  # the header's generation differs
    db.close()
    index = setup.index()
    answers(index, setup.model)
    assert index.counted["vector rows read"] == 60


def test_another_model_forgets_the_file(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    setup.night()
    setup.model = FakeEmbedder(name="another model 2")
    index = setup.index()
    index.embed(setup.model, vectors.EmbedBudget(count=3, seconds=1e9), print)
    assert matrix.recorded(index.db)[1:] == (-1, "")
    answers(index, setup.model)
    assert index.counted["vector rows read"] == 3  # the new model's three, from the index
    same_as_the_index_alone(index, setup.model.name)


def test_the_log_of_deleted_rows_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matrix, "DROPPED_MAX", 15)
    setup = Setup(tmp_path)
    setup.night()
    setup.journal(1, 10, tag="edited ")  # 12 deleted: kept for the file
    index = setup.index()
    index.refresh(setup.workspace, CLASSIFIER, print)
    assert matrix.recorded(index.db)[1] >= 1
    setup.journal(2, 10, tag="edited ")  # 24 deleted: past the bound, the file is forgotten
    index.refresh(setup.workspace, CLASSIFIER, print)
    assert matrix.recorded(index.db)[1:] == (-1, "")
    assert index.db.execute("SELECT count(*) FROM dropped").fetchone()[0] == 0
    index.close()
    index, _ = setup.question(ALL)
    same_as_the_index_alone(index, setup.model.name)


def test_an_id_given_again_after_its_row_was_deleted_is_read_afresh(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    setup.night()
    index = setup.index()
    (top,) = index.db.execute("SELECT path FROM docs ORDER BY id DESC LIMIT 1").fetchone()
    index.close()
    first = (setup.ws / "memory" / "2026-11-01.md").read_text()
    (setup.ws / top).unlink()  # the highest ids, in the file, deleted ...
    index, _ = setup.question()
    same_as_the_index_alone(index, setup.model.name)
    index.close()
    (setup.ws / "memory" / "2026-11-09.md").write_text(first)  # ... and given again, to texts
    index, _ = setup.question(vectors.EmbedBudget(0, 1.0))  # whose vectors the file already has
    assert 0 < index.counted["vector rows read"] <= 12
    same_as_the_index_alone(index, setup.model.name)


def test_an_index_of_the_build_before_is_made_again_silently(tmp_path: Path) -> None:
    """The generations and logs are tables of their own: an index without them is another
    build's own (made again from the Markdown, decision 432), never set aside as foreign."""
    from memfuse.recall import index as index_module

    before = index_module.SCHEMA.replace(matrix.SCHEMA, "")
    assert before != index_module.SCHEMA
    state = tmp_path / "state"
    StateFolder(state).ensure()
    db = sqlite3.connect(state / "recall.sqlite3")
    db.executescript(f"{before}\nPRAGMA user_version = {index_module.READER};")
    db.close()
    index = RecallIndex(StateFolder(state))
    assert not index.rebuilt  # removed as outdated: no warning, nothing moved aside
    assert matrix.recorded(index.db) == (0, -1, "")
    assert sorted(p.name for p in state.iterdir()) == ["recall.sqlite3"]


def test_the_log_of_stored_vectors_is_bounded_and_the_file_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = Setup(tmp_path)
    setup.night()
    monkeypatch.setattr(matrix, "DROPPED_MAX", 5)
    setup.journal(6, 10, tag="new ")
    index, _ = setup.question(vectors.EmbedBudget(count=10, seconds=1e9))  # 10 stored: past 5
    assert index.counted["vector rows read"] == 70  # the file forgotten: all from the index
    assert index.counted["vector files"] == 1  # and written again, the logs emptied
    assert index.db.execute("SELECT count(*) FROM stored").fetchone()[0] == 0
    same_as_the_index_alone(index, setup.model.name)
    index.close()
    again, _ = setup.question()
    assert again.counted["vector rows read"] == 0


def test_rows_added_since_the_file_are_a_block_after_it(tmp_path: Path) -> None:
    """A sync's new rows, some embedded by the question: the file's block is scored as it is
    mapped, the new rows' after it, and the answers are the index's."""
    setup = Setup(tmp_path)
    setup.night()
    setup.journal(6, 8, tag="new ")
    index, _ = setup.question(vectors.EmbedBudget(count=5, seconds=1e9))
    loaded = index._loaded(setup.model.name)
    assert len(loaded.rows.blocks) == len(loaded.parts) == 2
    assert [len(block) for block in loaded.rows.blocks] == [60, 5]
    assert index.counted["vector rows read"] == 5
    same_as_the_index_alone(index, setup.model.name)


def test_rows_read_since_of_another_length_are_left_out_not_an_error() -> None:
    """Rows.of leaves out a vector of another length than the file's; merged took the first
    of those it kept, and with none kept (every changed row of another length) raised
    IndexError out of the question."""
    import numpy as np

    kept = matrix.Rows.of([(1, "memory/a.md", b"\x01\x02"), (2, "memory/a.md", b"\x03\x04")])
    merged = kept.merged([], [(3, "memory/b.md", b"\x05\x06\x07")])
    assert merged.ids.tolist() == [1, 2]
    assert np.array_equal(merged.vecs, kept.vecs)


def test_a_killed_writers_temp_file_is_deleted_by_the_next_write(tmp_path: Path) -> None:
    """A process killed while writing the file (SIGTERM runs no `finally`) left its temp file,
    as large as the file, for good: one more with every such kill. The next write deletes one
    untouched for STALE, and leaves one another process is writing now."""
    setup = Setup(tmp_path)
    setup.night()
    setup.state.joinpath(f".{matrix.NAME}.dead0000.tmp").write_bytes(b"\0" * 4096)
    setup.state.joinpath(f".{matrix.NAME}.live0000.tmp").write_bytes(b"\0" * 4096)
    old = os.stat(setup.state / matrix.NAME).st_mtime - paged.STALE - 60
    os.utime(setup.state / f".{matrix.NAME}.dead0000.tmp", (old, old))
    setup.journal(6, 8, tag="new ")
    setup.night()
    left = sorted(p.name for p in setup.state.iterdir() if p.name.endswith(".tmp"))
    assert left == [f".{matrix.NAME}.live0000.tmp"]
