"""surface's and tidy's recalls go through the reranker when one is configured (issue 16):
twice the candidates, the reranker and agent-memory's weighting choose; `[rerank] surface` /
`tidy = false` opt out; a broken reranker costs one warning and the store's own order."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fakes import World

NOW = "2026-11-29T22:00"
RERANK = {
    "AGENT_MEMORY_RERANK_PROVIDER": "jina",
    "AGENT_MEMORY_RERANK_API_KEY": "sk-test-routine-0123456789",
}
MEMORY_MD = "# MEMORY\n- 当前最重要的事：Alice prefers dark mode in every editor\n"
CONFLICT = "当前最重要的事：Alice prefers light mode in every editor"


def recall_answer(contents: list[str]) -> str:
    """A store recall answer, best first by the store's own ranking."""
    memories = [
        {"id": f"m{n}", "content": text, "type": "knowledge", "priority": 2, "vitality": 0.9,
         "score": 1.0 - n / 100, "updated_at": "2026-11-29T20:00:00"}
        for n, text in enumerate(contents)
    ]  # fmt: skip
    return json.dumps({"memories": memories})


def consistency_world(world: World) -> None:
    (world.workspace / "MEMORY.md").write_text(MEMORY_MD)
    others = [f"当前最重要的事：第{n}个季度目标的复盘" for n in range(1, 5)]
    # The conflicting memory is the store's 5th: outside the 3 tidy compares, inside the 6
    # candidates it asks for when a reranker will choose.
    world.gateway.texts["recall"] = recall_answer([*others, CONFLICT, "当前最重要的事：休息"])


def user_config(text: str) -> None:
    path = Path(os.environ["HOME"]) / ".config" / "memfuse" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def recall_limits(world: World) -> list[int]:
    return [args["limit"] for tool, args in world.gateway.calls if tool == "recall"]


def test_tidy_compares_what_the_reranker_chose(world: World) -> None:
    consistency_world(world)
    plain = world.json("tidy", "--now", NOW)
    assert plain.data["consistency"]["status"] == "ok"
    assert recall_limits(world) == [3]

    world.rerank_factory(world.opened[0].rerank)
    assert world.reranker is not None
    world.reranker.score = lambda _q, doc: 9.0 if "light mode" in doc else 1.0
    reranked = world.json("tidy", "--now", NOW, env=RERANK)
    assert reranked.code == 0
    assert recall_limits(world) == [3, 6]
    assert world.reranker.requests[0][0] == "当前最重要的事"
    items = reranked.data["consistency"]["items"]
    assert len(items) == 3
    assert reranked.data["consistency"]["status"] == "conflict"
    assert any(i["memory"] == CONFLICT and i["verdict"] == "conflict" for i in items)
    assert "sk-test-routine" not in reranked.stdout + reranked.stderr


def test_tidy_opts_out_of_the_reranker_in_the_user_config(world: World) -> None:
    consistency_world(world)
    user_config("[rerank]\ntidy = false\n")
    out = world.json("tidy", "--now", NOW, env=RERANK)
    assert out.code == 0
    assert recall_limits(world) == [3]
    assert world.reranker is None or not world.reranker.requests
    assert out.data["consistency"]["status"] == "ok"


def test_a_failing_reranker_leaves_tidy_with_the_stores_own_top_three(world: World) -> None:
    consistency_world(world)
    world.rerank_factory(world.opened[0].rerank if world.opened else None)  # type: ignore[arg-type]
    assert world.reranker is not None
    world.reranker.error = "HTTP 500 from the reranker"
    out = world.json("tidy", "--now", NOW, env=RERANK)
    assert out.code == 0
    assert [w for w in out.envelope["warnings"] if "rerank failed" in w]
    assert [i["memory"] for i in out.data["consistency"]["items"]] == [
        f"当前最重要的事：第{n}个季度目标的复盘" for n in range(1, 4)
    ]


def surface_world(world: World) -> list[str]:
    contents = [
        f"Remember: the staging runbook, step {n}, lives in the ops repo" for n in range(59)
    ]
    contents.append("Remember: Dana wants the release notes before the Friday freeze")
    world.gateway.texts["recall"] = recall_answer(contents)
    return contents


def test_surface_keeps_the_memories_the_reranker_chose(world: World) -> None:
    surface_world(world)
    world.rerank_factory(world.opened[0].rerank if world.opened else None)  # type: ignore[arg-type]
    assert world.reranker is not None
    world.reranker.score = lambda _q, doc: 9.0 if "Dana" in doc else 1.0
    out = world.json("surface", "--now", NOW, env=RERANK)
    assert out.code == 0 and out.data["source"] == "agent-memory"
    assert recall_limits(world) == [60]
    recent = (world.workspace / "RECENT.md").read_text()
    assert "Dana wants the release notes" in recent  # the store ranked it last of 60

    user_config("[rerank]\nsurface = false\n")
    again = world.json("surface", "--now", NOW, env=RERANK)
    assert again.code == 0
    assert recall_limits(world) == [60, 30]
    assert len(world.reranker.requests) == 1


def test_a_failing_reranker_costs_surface_one_warning_not_recent_md(world: World) -> None:
    surface_world(world)
    world.rerank_factory(world.opened[0].rerank if world.opened else None)  # type: ignore[arg-type]
    assert world.reranker is not None
    world.reranker.error = "timed out after 10 s"
    out = world.json("surface", "--now", NOW, env=RERANK)
    assert out.code == 0
    assert out.data["source"] == "agent-memory"
    assert len([w for w in out.envelope["warnings"] if "rerank failed" in w]) == 1
    assert "staging runbook, step 0" in (world.workspace / "RECENT.md").read_text()


def test_doctor_says_which_commands_the_reranker_serves(world: World) -> None:
    def reranker_line(out: object) -> str:
        checks = out.data["checks"]  # type: ignore[attr-defined]
        return str(next(c for c in checks if c["name"] == "reranker")["detail"])

    assert reranker_line(world.json("doctor", "--now", NOW, env=RERANK)).endswith(
        "reranks recall, surface, tidy"
    )
    user_config("[rerank]\nsurface = false\n")
    line = reranker_line(world.json("doctor", "--now", NOW, env=RERANK))
    assert line.endswith("reranks recall, tidy")
    assert "sk-test-routine" not in line
