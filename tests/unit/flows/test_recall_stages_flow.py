"""`memfuse recall`'s stages, each shown by what it changes for the agent's question, and the
batch mode the benchmark and a busy agent use (docs/recall-quality.md has the measurements)."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from tests.fakes import World

NOW = "2026-11-29T22:00"  # a Sunday


def locations(world: World, query: str, *args: str) -> list[str]:
    out = world.json("recall", query, "--now", NOW, *args)
    assert out.code == 0, out.stdout
    return [r["location"] for r in out.data["results"]]


def contents(world: World, query: str, *args: str) -> list[str]:
    out = world.json("recall", query, "--now", NOW, *args)
    assert out.code == 0, out.stdout
    return [r["content"] for r in out.data["results"]]


def test_a_question_matches_other_forms_of_its_words_and_not_its_stop_words(
    world: World,
) -> None:
    world.journal("2026-11-20", "## 10:00\n- It is what it is, and that was that\n"
                                "## 11:00\n- Renewed both passports at the consulate\n")  # fmt: skip
    found = contents(world, "What was the thing about the passport renewal?", "--without", "store")
    assert found == ["Renewed both passports at the consulate"]


def test_the_next_bullet_of_a_session_lifts_the_one_that_asks(world: World) -> None:
    """A turn is often answered by the one after it: a bullet carries its neighbours' words,
    at a lower weight, so the session that holds both halves of a question comes first."""
    world.journal("2026-11-20", "## 10:00\n- Went hiking with Dana\n"
                                "- The trail was muddy all the way to the summit\n")  # fmt: skip
    world.journal("2026-11-24", "## 09:00\n- Dana's invoice\n")
    near = contents(world, "Dana summit", "--without", "store")
    assert near.index("Went hiking with Dana") < near.index("Dana's invoice")
    alone = contents(world, "Dana summit", "--without", "store", "--without", "near")
    assert alone.index("Dana's invoice") < alone.index("Went hiking with Dana")


def test_a_neighbour_is_only_one_of_the_same_session(world: World) -> None:
    world.journal("2026-11-20", "## 10:00\n- Went hiking with Dana\n"
                                "## 18:00\n- Cooked risotto for the summit dinner\n")  # fmt: skip
    world.journal("2026-11-24", "## 09:00\n- Dana's invoice\n")
    found = contents(world, "Dana summit", "--without", "store")
    assert found.index("Dana's invoice") < found.index("Went hiking with Dana")


@pytest.mark.parametrize(
    ("question", "day"),
    [
        ("what did I do last Saturday", "2026-11-28"),
        ("what happened on 21 November 2026", "2026-11-21"),
        ("anything from 2026-11-21", "2026-11-21"),
        ("上周六 做了什么", "2026-11-21"),  # the Saturday of last week (weeks start Monday)
        ("what did I do yesterday", "2026-11-28"),
    ],
)
def test_a_date_in_the_question_finds_that_days_journal(
    world: World, question: str, day: str
) -> None:
    for d, text in (("2026-11-21", "Fixed the boiler"), ("2026-11-28", "Painted the fence")):
        world.journal(d, f"## 10:00\n- {text}\n")
    assert locations(world, question, "--without", "store")[0] == f"memory/{day}.md:2"
    assert f"memory/{day}.md:2" not in locations(
        world, question, "--without", "store", "--without", "dates"
    )


def test_a_chinese_question_finds_chinese_bullets_without_a_segmenter(world: World) -> None:
    world.journal("2026-11-20", "## 10:00\n- 和小王讨论了数据库迁移的回滚方案\n"
                                "- 中午吃了牛肉面\n")  # fmt: skip
    assert contents(world, "数据库回滚怎么做", "--without", "store")[0].startswith("和小王")


def test_the_store_and_the_journals_agree_on_one_result_and_the_store_alone_still_counts(
    world: World,
) -> None:
    """A memory the agent stored itself (in no journal) is found through the store."""
    world.journal("2026-11-20", "## 10:00\n- Met Bob about the billing cutover\n")
    assert world.run("sync", "--now", NOW).code == 0
    world.gateway.direct("remember", {"content": "Bob's billing cutover slipped to Friday"})
    out = world.json("recall", "billing cutover", "--now", NOW)
    by_content = {r["content"]: r for r in out.data["results"]}
    assert "journal" in by_content["Met Bob about the billing cutover"]["reason"]
    assert "store" in by_content["Met Bob about the billing cutover"]["reason"]
    stored = by_content["Bob's billing cutover slipped to Friday"]
    assert stored["location"] is None and stored["id"] is not None


def test_archived_days_and_a_weekly_roll_up_are_searched_where_they_are(world: World) -> None:
    days = [f"2026-10-{d:02d}" for d in range(5, 12)]  # a whole week, months ago
    for n, day in enumerate(days):
        world.journal(day, f"## 10:00\n- Checked the beehive number {n}\n")
    world.journal(days[2], "## 10:00\n- Harvested eleven jars of heather honey\n")
    assert world.run("sync", "--now", f"{days[-1]}T22:00").code == 0
    assert world.json("tidy", "--archive", "--now", NOW).code in (0, 4)
    assert (world.workspace / "memory" / "archive" / f"{days[2]}.md").exists()
    found = locations(world, "heather honey", "--without", "store")
    assert found[0] == f"memory/archive/{days[2]}.md:2"
    (world.workspace / "memory" / "archive" / f"{days[2]}.md").unlink()  # the roll-up only
    path, line = locations(world, "heather honey", "--without", "store")[0].rsplit(":", 1)
    assert path.startswith("memory/weekly/")
    weekly = (world.workspace / path).read_text().splitlines()
    assert "heather honey" in weekly[int(line) - 1]


def batch(world: World, stdin: str, *args: str) -> tuple[int, list[dict[str, Any]]]:
    out = world.run("recall", "--batch", "--now", NOW, *args, stdin=stdin)
    return out.code, [json.loads(line) for line in out.stdout.splitlines()]


def test_a_batch_answers_each_line_in_order_in_one_store_session(world: World) -> None:
    world.journal("2026-11-20", "## 10:00\n- Met Bob about the billing cutover\n"
                                "- Alice prefers dark mode\n")  # fmt: skip
    assert world.run("sync", "--now", NOW).code == 0
    opened = len(world.opened)
    code, envelopes = batch(world, "billing cutover\n\ndark mode\n", "--limit", "3")
    assert code == 0
    assert len(world.opened) == opened + 1  # one store session for every question
    assert [e["status"] for e in envelopes] == ["ok", "failed", "ok"]
    assert envelopes[0]["data"]["query"] == "billing cutover"
    assert envelopes[0]["data"]["results"][0]["content"] == "Met Bob about the billing cutover"
    assert envelopes[1]["exit_code"] == 2 and "empty line" in envelopes[1]["data"]["error"]
    assert envelopes[2]["data"]["results"][0]["content"] == "Alice prefers dark mode"
    assert all(len(e["data"].get("results", [])) <= 3 for e in envelopes)
    assert all(isinstance(e["duration_ms"], int) for e in envelopes)


def test_a_batch_with_the_store_down_answers_every_line_from_the_journals(world: World) -> None:
    world.journal("2026-11-20", "## 10:00\n- Met Bob about the billing cutover\n")
    world.gateway.down = "failed"
    code, envelopes = batch(world, "billing\ncutover\n")
    assert code == 0
    assert [e["status"] for e in envelopes] == ["degraded", "degraded"]
    assert all(e["data"]["sources"] == ["journals"] for e in envelopes)
    assert all(e["data"]["results"][0]["location"] == "memory/2026-11-20.md:2" for e in envelopes)


def test_a_question_too_long_to_be_one_is_refused_and_the_next_is_answered(
    world: World,
) -> None:
    world.journal("2026-11-20", "## 10:00\n- Alice prefers dark mode\n")
    flood = " ".join(f"w{n}" for n in range(20_000))
    code, envelopes = batch(world, f"{flood}\ndark mode\n", "--without", "store")
    assert code == 0
    assert [e["status"] for e in envelopes] == ["failed", "ok"]
    assert "longer than" in envelopes[0]["data"]["error"]
    assert envelopes[1]["data"]["results"][0]["content"] == "Alice prefers dark mode"
    single = world.json("recall", flood, "--now", NOW)
    assert single.code == 2 and "longer than" in single.stdout + single.stderr


def test_batch_and_a_query_are_one_or_the_other(world: World) -> None:
    out = world.run("recall", "dark mode", "--batch", stdin="x\n")
    assert out.code == 2 and "--batch" in out.stderr


def test_no_socket_is_opened_when_no_reranker_is_configured(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default recall is offline: the journals, the index, and the store's own pipe. The
    real reranker factory is in place, so a configured reranker would be reached (and is)."""
    world.journal("2026-11-20", "## 10:00\n- Met Bob about the billing cutover\n")
    assert world.run("sync", "--now", NOW).code == 0
    world.real_reranker = True
    opened: list[object] = []

    def refuse(*args: object, **_kw: object) -> None:
        opened.append(args)
        raise OSError("network use in an offline recall")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    out = world.json("recall", "billing cutover", "--now", NOW)
    assert out.code == 0 and out.data["results"]
    code, envelopes = batch(world, "billing\ncutover\n")
    assert code == 0 and len(envelopes) == 2
    assert opened == []

    configured = {
        "AGENT_MEMORY_RERANK_PROVIDER": "jina",
        "AGENT_MEMORY_RERANK_API_KEY": "sk-test-offline-0123456789",
        "AGENT_MEMORY_RERANK_BASE_URL": "http://127.0.0.1:9/v1/rerank",
    }
    out = world.json("recall", "billing cutover", "--now", NOW, env=configured)
    assert out.code == 0 and out.data["reranked"] is False  # one warning, the fused order
    assert opened, "the trap did not see the configured reranker"


def test_the_store_does_not_reorder_bullets_but_ranks_what_only_it_holds(world: World) -> None:
    """Measured on LoCoMo (docs/recall-quality.md): the store's vote for a synced bullet pulls
    the order towards its weaker ranking, so bullets keep the local index's order; a memory
    the agent stored itself is ranked by the store, among the best."""
    lines = [
        "- Priya drafted the billing cutover runbook for the finance team",
        "- Jonas asked whether the cutover needs a maintenance window",
        "- Billing invoices go out on the first Monday",
        "- Dana reviewed the cutover dashboard latency numbers from Lisbon",
        "- Carol wants the billing export in CSV, not Excel",
        "- The staging cutover rehearsal failed on the webhook queue",
    ]
    world.journal("2026-11-20", "\n".join(f"## {10 + n}:00\n{b}" for n, b in enumerate(lines)))
    assert world.run("sync", "--now", NOW).code == 0
    world.gateway.direct("remember", {"content": "The billing cutover moved to the 3rd"})
    local = contents(world, "billing cutover", "--without", "store")
    # The store answers in the opposite order to the local index, its own memory first.
    answer = world.gateway.direct("recall", {"query": "billing cutover", "limit": 20})
    key = next(k for k, v in answer.items() if isinstance(v, list))
    by_text = {m["content"]: m for m in answer[key]}
    own = by_text.pop("The billing cutover moved to the 3rd")
    answer[key] = [own, *sorted(by_text.values(), key=lambda m: -local.index(m["content"]))]
    world.gateway.texts["recall"] = json.dumps(answer)
    fused = contents(world, "billing cutover")
    assert fused[0] == "The billing cutover moved to the 3rd"
    assert [c for c in fused if c in local] == local[: len(fused) - 1]
