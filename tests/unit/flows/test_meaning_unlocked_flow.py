"""The model never holds the workspace lock and nobody waits for it (issue 49, decisions 350,
351): sync indexes by words alone; the night's tidy embeds once it let go of the lock; a
question embeds itself and a bounded few of the pending texts, newest first; until a text has
its vector, the words find it. Bounds are asserted by counting, never by timing."""

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


def test_sync_embeds_nothing_and_the_words_find_what_has_no_vector(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = world.embedder = Watching(world)
    world.journal(DAY, JOURNAL)
    out = world.json("sync", "--now", NOW)
    assert out.code == 0 and out.data["counts"]["added"] == 3
    assert model.embedded == [] and model.holders == []  # no model in the sync at all
    monkeypatch.setattr(vectors, "QUESTION", vectors.Budget(0, 1.0))  # a question embeds none
    found = world.json("recall", "dark mode", "--now", NOW)
    assert found.data["results"][0]["content"] == "Alice prefers dark mode in every editor"
    reason = found.data["results"][0]["reason"]
    assert "journal" in reason and "meaning" not in reason
    assert model.embedded == []


def test_tidy_embeds_after_letting_go_of_the_lock(world: World) -> None:
    model = world.embedder = Watching(world)
    world.journal(DAY, JOURNAL)
    assert world.run("sync", "--now", NOW).code == 0
    out = world.json("tidy", "--now", f"{DAY}T23:00")
    assert out.code == 0
    assert len(model.embedded) == 3 and out.data["recall_index_embedded"] == 3
    assert model.holders and all(holder is None for holder in model.holders)
    assert all(closed >= 2 for closed in model.store_closed)  # sync's and tidy's: let go
    again = world.json("tidy", "--now", f"{DAY}T23:30")
    assert again.data["recall_index_embedded"] == 0 and len(model.embedded) == 3
    found = world.json("recall", "automobile", "--now", NOW)
    assert found.data["results"][0]["reason"] == "rrf:meaning"
    assert len(model.embedded) == 3  # the question embedded itself alone


def test_a_note_during_the_nights_embedding_is_written(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.flows.test_serve_flow import service

    model = world.embedder = Watching(world)
    world.journal(DAY, JOURNAL)
    assert world.run("sync", "--now", NOW).code == 0
    answers: list[Any] = []
    model.meanwhile = lambda: answers.append(
        service(world).call("note", {"text": "Noted while the model runs"})
    )
    assert world.run("tidy", "--now", f"{DAY}T23:00").code == 0
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


def test_an_embedding_stops_before_a_step_that_would_end_past_its_time(tmp_path: Any) -> None:
    from memfuse.recall.index import RecallIndex
    from memfuse.text.classify import Classifier
    from memfuse.workspace.layout import Workspace

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / f"{DAY}.md").write_text(
        "## 09:00\n" + "".join(f"- Bullet {n} on topic {n}\n" for n in range(40))
    )
    model = Ticking(each=0.01)
    index = RecallIndex(StateFolder(tmp_path / "state"), clock=model.clock)
    workspace = Workspace(ws, tmp_path / "state")
    # the first text alone (the model's load: not paced), then 4 texts a step at 0.04 s: two
    # steps fit in 0.1 s, a third would end at 0.12 s
    index.refresh(workspace, Classifier((), ()), print, model, vectors.Budget(100, 0.1, 4))
    assert len(model.embedded) == 9 and index.unembedded
    # the count bounds it too, however much time is left
    index.refresh(workspace, Classifier((), ()), print, model, vectors.Budget(5, 100.0, 2))
    assert len(model.embedded) == 14 and index.unembedded
    index.close()
