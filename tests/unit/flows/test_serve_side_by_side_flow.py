"""serve's calls side by side (issue 57) and a note embedded by the serve that wrote it, after
it answered (issue 56). No timing: a model that blocks on an event the other call sets."""

from __future__ import annotations

import threading
from typing import Any

from tests.fakes import FakeEmbedder, World
from tests.unit.flows.test_serve_flow import ok, service, synced

GUARD = 60.0  # a hang guard, never a measure


class Holding(FakeEmbedder):
    """A model that holds the question "slow question" until `release` is set."""

    def __init__(self) -> None:
        super().__init__(synonyms={"automobile": "car"})
        self.release = threading.Event()
        self.held: bool | None = None

    def embed(self, texts: Any, *, question: bool = False) -> Any:
        if question and list(texts) == ["slow question"]:
            self.held = not self.release.wait(GUARD)
        return super().embed(texts, question=question)


def test_a_question_is_answered_while_another_holds_an_index(world: World) -> None:
    model = world.embedder = Holding()
    synced(world)
    served = service(world)
    served.warm()
    slow: list[Any] = []
    first = threading.Thread(
        target=lambda: slow.append(served.call("recall", {"query": "slow question"}))
    )
    first.start()
    try:
        found = ok(served.call("recall", {"query": "dark mode"}))
        assert found["data"]["results"][0]["content"].startswith("Remember: Alice prefers dark")
    finally:
        model.release.set()
        first.join(GUARD)
    assert model.held is False and not slow[0].error  # it was released, not timed out
    served.close()


def test_a_note_is_embedded_by_the_serve_that_wrote_it_after_it_answered(world: World) -> None:
    model = world.embedder = FakeEmbedder(synonyms={"automobile": "car"})
    synced(world)
    served = service(world)
    served.warm()
    ok(served.call("note", {"text": "Parked the car by the river"}))
    assert "Parked the car by the river" not in model.embedded  # the answer waited for nothing
    served.embed_written()  # what `memfuse serve` runs after each note it answered
    assert model.embedded.count("Parked the car by the river") == 1
    found = ok(served.call("recall", {"query": "automobile", "limit": 3}))
    top = found["data"]["results"][0]
    assert top["content"] == "Parked the car by the river" and "meaning" in top["reason"]
    assert model.embedded.count("Parked the car by the river") == 1
    served.close()
