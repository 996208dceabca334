"""The model never holds the workspace lock and nobody waits for it (issues 49, 56; decisions
350, 650): sync indexes by words under the lock and embeds what is new once it let go of it
(surface and tidy go on with what a run's count left); a question embeds itself and a bounded
few of the pending texts, newest first; until a text has its vector, the words find it. Bounds
are counts, the same on any machine; time is a valve that says when it cuts. Asserted by
counting, never by timing."""

from __future__ import annotations

from typing import Any

import pytest

from memfuse.recall import vectors
from memfuse.run.lock import lock_holder
from memfuse.state.folder import StateFolder
from tests.fakes import FakeEmbedder, World, state_of

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
JOURNAL = (
    "## 09:30\n- Parked the car in the north garage before the review\n"
    "- Alice prefers dark mode in every editor\n"
    "## 14:00\n- 今天讨论了 billing 迁移的回滚步骤\n"
)


class Watching(FakeEmbedder):
    """A model that notes, at each call, who holds the workspace lock (None: nobody)."""

    def __init__(self, world: World) -> None:
        super().__init__(synonyms={"automobile": "car"})
        self.state = StateFolder(state_of(world.workspace))
        self.holders: list[str | None] = []
        self.meanwhile: Any = None  # called at each embedding of bullets
        self.world = world
        self.store_closed: list[int] = []  # the store's closes so far, at each call

    def embed(self, texts: Any, *, question: bool = False) -> Any:
        self.holders.append(lock_holder(self.state))
        self.store_closed.append(self.world.gateway.closed)
        if self.meanwhile is not None and not question:
            self.meanwhile()
        return super().embed(texts, question=question)


def test_sync_embeds_what_is_new_after_letting_go_of_the_lock(world: World) -> None:
    model = world.embedder = Watching(world)
    world.journal(DAY, JOURNAL)
    out = world.json("sync", "--now", NOW)
    assert out.code == 0 and out.data["counts"]["added"] == 3
    assert len(model.embedded) == 3 and out.data["recall_index_embedded"] == 3
    assert model.holders and all(holder is None for holder in model.holders)
    assert all(closed >= 1 for closed in model.store_closed)  # the store's session let go
    found = world.json("recall", "automobile", "--now", NOW)
    assert found.data["results"][0]["reason"] == "rrf:meaning"
    assert len(model.embedded) == 3  # the first question found the index whole
    again = world.json("tidy", "--now", f"{DAY}T23:00")
    assert again.data["recall_index_embedded"] == 0 and len(model.embedded) == 3


def test_what_a_runs_count_leaves_the_next_run_embeds_and_the_words_find_meanwhile(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = world.embedder = Watching(world)
    world.journal(DAY, JOURNAL)
    monkeypatch.setattr(vectors, "RUN", vectors.EmbedBudget(2, 600.0, 1))
    monkeypatch.setattr(vectors, "QUESTION", vectors.EmbedBudget(0, 1.0))  # a question embeds none
    assert world.json("sync", "--now", NOW).data["recall_index_embedded"] == 2
    found = world.json("recall", "dark mode", "--now", NOW)
    assert found.data["results"][0]["content"] == "Alice prefers dark mode in every editor"
    assert "journal" in found.data["results"][0]["reason"]
    out = world.json("surface", "--now", f"{DAY}T22:05")
    assert out.code == 0 and len(model.embedded) == 3  # the one left, and no text twice
    assert len(set(model.embedded)) == 3 and all(holder is None for holder in model.holders)


def test_a_note_during_the_runs_embedding_is_written(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.flows.test_serve_flow import service

    model = world.embedder = Watching(world)
    world.journal(DAY, JOURNAL)
    answers: list[Any] = []
    model.meanwhile = lambda: answers.append(
        service(world).call("note", {"text": "Noted while the model runs"})
    )
    assert world.run("sync", "--now", NOW).code == 0
    assert answers and not any(answer.error for answer in answers)
    assert (
        "- Noted while the model runs\n" in (world.workspace / "memory" / f"{DAY}.md").read_text()
    )


def test_a_question_after_300_new_bullets_embeds_a_bounded_few_newest_first(
    world: World,
) -> None:
    model = world.embedder = Watching(world)
    world.journal("2026-11-28", "## 09:00\n" + "".join(f"- Old note {n}\n" for n in range(150)))
    world.journal(DAY, "## 09:00\n" + "".join(f"- New note {n}\n" for n in range(150)))
    with pytest.MonkeyPatch.context() as patch:  # a sync whose run left them all
        patch.setattr(vectors, "RUN", vectors.EmbedBudget(0, 1.0))
        assert world.run("sync", "--now", NOW).code == 0
    assert world.json("recall", "note", "--now", NOW).code == 0
    first = list(model.embedded)
    assert len(first) == vectors.QUESTION.count < 300
    assert all(text.startswith("New note") for text in first)  # the rows written last
    assert model.asked == ["note"]
    assert world.json("recall", "note", "--now", NOW).code == 0
    assert len(model.embedded) == 2 * vectors.QUESTION.count
    assert len(set(model.embedded)) == len(model.embedded)  # never one text twice


class Ticking(FakeEmbedder):
    """A model whose every text costs `each` seconds of a clock the budget reads."""

    def __init__(self, each: float) -> None:
        super().__init__()
        self.now, self.each = 0.0, each

    def clock(self) -> float:
        return self.now

    def embed(self, texts: Any, *, question: bool = False) -> Any:
        self.now += self.each * len(texts)
        return super().embed(texts, question=question)


def test_time_is_a_valve_that_says_when_it_cuts_never_the_bound(tmp_path: Any) -> None:
    from memfuse.recall.index import RecallIndex
    from memfuse.text.classify import Classifier
    from memfuse.workspace.layout import Workspace

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / f"{DAY}.md").write_text(
        "## 09:00\n" + "".join(f"- Bullet {n} on topic {n}\n" for n in range(100))
    )
    workspace = Workspace(ws, tmp_path / "state")
    # a machine ten times slower than a quiet one (50 ms a text): a question still embeds its
    # whole count, as it does on a quiet one
    slow = Ticking(each=0.05)
    index = RecallIndex(StateFolder(tmp_path / "state"), clock=slow.clock)
    said: list[str] = []
    index.refresh(workspace, Classifier((), ()), said.append, slow, vectors.QUESTION)
    assert len(slow.embedded) == vectors.QUESTION.count and said == []
    # a model stalled past the valve: no step begins past it, and the run says so
    stalled = Ticking(each=1.0)
    index.clock = stalled.clock
    index.refresh(
        workspace, Classifier((), ()), said.append, stalled, vectors.EmbedBudget(40, 5.0, 4)
    )
    assert len(stalled.embedded) == 8 and index.unembedded
    assert len(said) == 1 and "a time limit (5 s) cut it at 8 texts" in said[0]
    index.close()
