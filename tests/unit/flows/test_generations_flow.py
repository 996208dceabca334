"""Every agent-memory from 2.2 to 5.1 (issue 15): memfuse tells them apart by their tools, reads
each one's answers, and warns about their limits. In-process, the fake store answering as
each generation (the reference server's AGENT_MEMORY_COMPAT)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from memfuse.refserver.store import Store
from memfuse.refserver.tools import call_tool
from memfuse.store import generations
from memfuse.store.answers import Outcome, reflect_counts, reflect_totals
from memfuse.store.gateway import Answer, CallFailed
from memfuse.store.generations import GENERATIONS, Generation, Tools, generation_of
from tests.fakes import Clock, FakeGateway, World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
JOURNAL = (
    "## 09:30\n- Met Bob about the staging deploy of the billing service\n"
    "- Reviewed the Q3 roadmap draft with Carol and Dana\n"
    "- Remember: Alice prefers release notes in English\n"
    "- 今天很开心，终于修好了登录问题\n"
)


@pytest.mark.parametrize("generation", [2, 3, 4, 5])
def test_doctor_names_the_generation_from_the_tool_list(world: World, generation: int) -> None:
    world.gateway.generation = generation
    out = world.json("doctor", "--now", NOW)
    assert out.data["generation"] == generation
    status = world.json("status", "--now", NOW)
    assert status.data["generation"] == generation  # as doctor last saw it


def test_generation_markers() -> None:
    assert generation_of(["remember", "recall", "status"]).number == 2
    assert generation_of(["remember", "ingest", "surface"]).number == 3
    assert generation_of(["remember", "ingest", "reindex"]).number == 4
    assert generation_of(["remember", "reindex", "archive"]).number == 5


@pytest.mark.parametrize("generation", [4, 5])
def test_tidy_reads_the_per_phase_json_of_4x_and_5x(world: World, generation: int) -> None:
    world.gateway.generation = generation
    world.journal(DAY, JOURNAL)
    assert world.run("sync", "--now", NOW).code == 0
    out = world.json("tidy", "--now", NOW)
    assert out.code == 0
    reflect = out.data["reflect"]
    assert set(reflect) == {"decay", "tidy", "govern"}
    assert set(reflect["decay"]) == {"updated", "decayed", "belowThreshold"}
    assert "evicted" in reflect["govern"]
    if generation == 5:
        assert {"archived", "evictedByType"} <= set(reflect["govern"])
        assert "staleDecayed" in reflect["tidy"]
    human = world.run("tidy", "--now", NOW)
    assert "reflect: decay: updated" in human.stdout


def test_tidy_reports_3x_prose_raw_with_its_totals(world: World) -> None:
    world.gateway.generation = 3
    world.journal(DAY, JOURNAL)
    world.run("sync", "--now", NOW)
    out = world.json("tidy", "--now", NOW)
    assert isinstance(out.data["reflect"], str)
    assert "Sleep Cycle" in out.data["reflect"]
    assert out.data["reflect_totals"] == {"before": 4, "after": 4}


def test_reflect_parsers_on_the_real_layouts() -> None:
    text = (
        'job: 1b4e28ba-2fa1-11d2-883f-0016d3cca427\n\n### decay\n{\n  "updated": 3,\n'
        '  "decayed": 2,\n  "belowThreshold": 0\n}\n\n### tidy\n{"archived": 1, "orphansCleaned": 0}\n'
        '\n### govern\n{"orphanPaths": 0, "emptyMemories": 0, "evicted": 4}\n\n### 📊 总结\n'
        "记忆总数：12 → 7（-5）\n"
    )
    assert reflect_counts(text) == {
        "decay": {"updated": 3, "decayed": 2, "belowThreshold": 0},
        "tidy": {"archived": 1, "orphansCleaned": 0},
        "govern": {"orphanPaths": 0, "emptyMemories": 0, "evicted": 4},
    }
    assert reflect_totals(text) == {"before": 12, "after": 7}
    assert reflect_counts("## 🌙 Sleep Cycle 报告\n### Decay（衰减）\n处理 0 条记忆") is None


def test_5x_refuses_a_short_bullet_and_merges_a_near_duplicate(world: World) -> None:
    world.gateway.generation = 5
    world.journal(
        DAY,
        "## 09:30\n- Fixed login bug\n"  # 15 effective characters: under 5.x's 20
        "- The staging database listens on port 5432 for the billing service\n"
        "## 14:00\n- The staging database listens on port 6543 for the billing service\n",
    )
    out = world.json("sync", "--now", NOW)
    counts = out.data["counts"]
    assert (counts["added"], counts["rejected"], counts["merged"]) == (1, 1, 1)
    assert "effective 15 < 20" in out.data["rejected"][0]["reason"]
    memory = world.gateway.direct("recall_path", {"uri": f"event://journal/{DAY}#1400-1"})
    assert memory["found"] is True  # 5.x attaches the merged write's URI
    assert "；" in memory["memory"]["content"]
    again = world.json("sync", "--verify", "--date", DAY, "--now", NOW)
    assert again.data["index"]["lost"] == 0
    assert again.data["counts"]["unchanged"] == 3


def test_doctor_warns_when_5x_capacity_is_below_the_journals(world: World) -> None:
    world.gateway.generation = 5
    world.gateway.caps = {"identity": None, "emotion": 50, "knowledge": 250, "event": 1,
                          "total": 350}  # fmt: skip
    world.journal(DAY, JOURNAL)
    world.run("sync", "--now", NOW)
    out = world.json("doctor", "--now", NOW)
    check = next(c for c in out.data["checks"] if c["name"] == "capacity")
    assert check["ok"] is False
    assert "event: keeps 1, the journals of the last 7 days hold 2" in check["detail"]
    assert "AGENT_MEMORY_MAX_EVENT" in check["detail"]


def test_5x_eviction_reaches_the_archive_and_verify_calls_it_forgotten_not_lost(
    world: World,
) -> None:
    world.gateway.generation = 5
    world.gateway.caps = {"identity": None, "emotion": 50, "knowledge": 250, "event": 1,
                          "total": 350}  # fmt: skip
    world.journal(DAY, JOURNAL)
    world.run("sync", "--now", NOW)
    call_tool(world.gateway.store, "reflect", {"phase": "all"})
    archived = world.gateway.direct("archive", {"action": "list"})
    assert archived["count"] == 1  # the least vital of the two events
    out = world.json("sync", "--verify", "--now", NOW)
    assert out.data["index"]["forgotten"] == 1
    assert out.data["index"]["lost"] == 0
    assert out.data["counts"]["restored"] == 0


def mcporter_config(tmp: Path, env: dict[str, str]) -> Path:
    path = tmp / "mcporter.json"
    entry = {"command": "node", "args": ["/opt/am/dist/mcp/server.js"], "env": env}
    path.write_text(json.dumps({"mcpServers": {"agent-memory": entry}, "imports": []}))
    return path


def test_doctor_warns_when_auto_ingest_watches_this_workspace(world: World, tmp_path: Path) -> None:
    world.gateway.generation = 4
    watching = mcporter_config(tmp_path, {"AGENT_MEMORY_WORKSPACE": str(world.workspace)})
    out = world.json("doctor", "--mcporter-config", str(watching), "--now", NOW)
    check = next(c for c in out.data["checks"] if c["name"] == "auto-ingest")
    assert check["ok"] is False
    assert "set AGENT_MEMORY_AUTO_INGEST=0" in check["detail"]
    off = mcporter_config(
        tmp_path, {"AGENT_MEMORY_WORKSPACE": str(world.workspace), "AGENT_MEMORY_AUTO_INGEST": "0"}
    )
    quiet = world.json("doctor", "--mcporter-config", str(off), "--now", NOW)
    check = next(c for c in quiet.data["checks"] if c["name"] == "auto-ingest")
    assert check["ok"] is True


@pytest.mark.parametrize("generation", [3, 4, 5])
def test_surface_reads_3x_to_5x_recall_answers(world: World, generation: int) -> None:
    world.gateway.generation = generation
    world.journal(DAY, JOURNAL)
    world.run("sync", "--now", NOW)
    out = world.json("surface", "--now", f"{DAY}T22:05")
    assert out.code == 0, out.stderr
    assert out.data["source"] == "agent-memory"
    assert sum(out.data["sections"].values()) >= 3


def test_the_reference_store_answers_like_each_generation(tmp_path: Path) -> None:
    clock = Clock()
    for generation in (2, 3, 4, 5):
        store = Store(str(tmp_path / f"g{generation}.db"), "default", clock, generation=generation)
        text = call_tool(store, "recall", {"query": "x"})["content"][0]["text"]
        answer = json.loads(text)
        assert ("intent" in answer) is (generation == 2)
        status = json.loads(call_tool(store, "status", {})["content"][0]["text"])
        assert ("links" in status) is (generation == 2)
        assert ("capacity" in status) is (generation == 5)
        assert ("feedback_events" in status) is (generation >= 4)
        reflect = call_tool(store, "reflect", {"phase": "all"})["content"][0]["text"]
        assert reflect.lstrip().startswith("{") is (generation == 2)


def test_4x_eviction_at_its_limit_is_forgotten_not_resent(world: World, tmp_path: Path) -> None:
    world.gateway.generation = 4
    world.gateway.caps = {"total": 2}
    config = mcporter_config(tmp_path, {"AGENT_MEMORY_MAX_MEMORIES": "2"})
    world.journal(DAY, JOURNAL)
    world.run("sync", "--now", NOW)
    call_tool(world.gateway.store, "reflect", {"phase": "all"})
    assert len(world.gateway.journal_uris()) == 2
    sent = world.gateway.count("remember")
    out = world.json("sync", "--verify", "--mcporter-config", str(config), "--now", NOW)
    assert out.data["index"] == {
        "expected": 4,
        "present": 2,
        "lost": 0,
        "forgotten": 2,
        "altered": 0,
    }
    assert world.gateway.count("remember") == sent


class SixthStore(FakeGateway):
    """A made-up agent-memory 6: it offers a new tool, its write tool is `memory_write` (no
    `remember`), and it answers in a shape no earlier generation used (`{"result": "created",
    "memory": {"id": …}}`)."""

    def list_tools(self) -> list[str]:
        offered = ["memory_write" if t == "remember" else t for t in super().list_tools()]
        return [*offered, "timeline"]

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        if tool == "remember":
            raise CallFailed("MCP error -32602: Tool remember not found")
        answer = super().call("remember" if tool == "memory_write" else tool, arguments)
        if tool != "memory_write" or not isinstance(answer.value, dict):
            return answer
        old = answer.value
        result = {"added": "created", "updated": "rewritten", "merged": "folded"}.get(
            old.get("action", ""), "declined"
        )
        new = {"result": result, "memory": {"id": old["memoryId"]} if "memoryId" in old else None,
               "why": old.get("reason", "")}  # fmt: skip
        return Answer(tool, json.dumps(new), new)


def sixth_outcome(answer: Mapping[str, Any]) -> Outcome:
    """agent-memory 6's write answer, read."""
    action = {"created": "added", "rewritten": "updated", "folded": "merged"}.get(
        str(answer.get("result")), "rejected"
    )
    memory = answer.get("memory") or {}
    return Outcome(action, memory.get("id"), str(answer.get("why", "")))


# What memfuse would add for agent-memory 6: one entry, its marker, its write tool's name and
# its write answer's reader.
SIXTH = Generation(
    6, ("timeline",), Tools(remember="memory_write", archive="archive"), read_outcome=sixth_outcome,
    eviction="archive", ingests_by_itself=True,
)  # fmt: skip


def test_a_sixth_generation_is_one_entry_in_the_store_client(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Adding a generation whose write tool is renamed and whose ids come in another shape
    touches only memfuse.store (issues 28, 41): here, one `Generation` entry; every command
    runs on it unchanged."""
    world.journal(DAY, JOURNAL)
    world.gateway = SixthStore(tmp_path / "unknown.db", generation=5)
    unknown = world.json("sync", "--now", NOW)
    assert unknown.data["counts"]["failed"] == 4  # not written, so retried: nothing is lost
    assert "remember not found" in unknown.warnings_text

    monkeypatch.setattr(generations, "GENERATIONS", (SIXTH, *GENERATIONS))
    world.gateway = SixthStore(tmp_path / "sixth.db", generation=5)
    out = world.json("sync", "--now", NOW)
    assert out.code == 0, out.stderr
    assert out.data["counts"]["added"] == 4
    assert world.json("sync", "--date", DAY, "--now", NOW).data["counts"]["unchanged"] == 4
    assert world.json("doctor", "--now", NOW).data["generation"] == 6
    assert world.json("surface", "--now", NOW).data["source"] == "agent-memory"
    assert world.json("tidy", "--now", NOW).data["reflect"] is not None
