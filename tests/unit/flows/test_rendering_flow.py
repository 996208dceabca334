"""What a person reads is what an agent reads: each command's text is its `--json` data, rendered.

Each read-only command runs twice on the same state, once for people and once with `--json`;
the text must be exactly the JSON's `data` put through memfuse.run.render — so nothing the text
shows is missing from the envelope, and nothing is printed that the data does not hold.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memfuse.run import render, results
from tests.fakes import World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
JOURNAL = (
    "# 2026-11-29\n\n"
    "- 今天很开心，终于修好了登录问题\n"
    "- Decided: billing migration ships before the end of December\n"
    "- Met Bob about the staging deploy\n"
    "- ok\n"  # refused by the store's gate: too short
)
MEMORY_MD = "# MEMORY\n\n- 当前最重要的事：十二月底前完成 billing 迁移\n"

Renderer = Callable[[Any], list[str]]
READ_ONLY: list[tuple[tuple[str, ...], Renderer]] = [
    (("sync", "--dry-run", "--explain"), render.sync),
    (("sync", "--all", "--dry-run"), render.sync),
    (("surface", "--dry-run"), render.surface),
    (("tidy", "--dry-run", "--archive"), render.tidy),
    (("recall", "billing migration"), render.recall),
    (("status",), render.status),
    (("doctor",), render.doctor),
    (("where", "billing"), render.where),
    (("where", "ok"), render.where),
    (("rollback", "--dry-run"), render.rollback),
]
SHAPES: dict[str, Any] = {
    "sync": results.SyncData, "surface": results.SurfaceData, "tidy": results.TidyData,
    "recall": results.RecallData, "status": results.StatusData, "doctor": results.DoctorData,
    "where": results.WhereData, "rollback": results.RollbackData,
}  # fmt: skip


@pytest.fixture
def lived_in(world: World) -> World:
    """A workspace after a day of the lifecycle: synced (one bullet refused), surfaced, tidied."""
    world.journal(DAY, JOURNAL)
    (world.workspace / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    for command in ("sync", "surface", "tidy"):
        assert world.run(command, "--now", NOW).code == 0
    return world


@pytest.mark.parametrize(("argv", "rendered"), READ_ONLY, ids=[" ".join(a) for a, _ in READ_ONLY])
def test_the_text_is_the_json_data_rendered(
    lived_in: World, argv: tuple[str, ...], rendered: Renderer
) -> None:
    text = lived_in.run(*argv, "--now", NOW)
    data = lived_in.json(*argv, "--now", NOW).data
    assert text.code == 0, text.stderr
    assert text.stdout.rstrip("\n").split("\n") == rendered(data)
    assert_shape(data, SHAPES[argv[0]])


def assert_shape(data: dict[str, Any], shape: Any) -> None:
    """The envelope's data has every key results.py promises, and none it does not declare."""
    assert shape.__required_keys__ <= data.keys(), "a declared key is missing"
    assert data.keys() <= shape.__required_keys__ | shape.__optional_keys__, "an undeclared key"


def test_a_store_outage_reads_the_same_in_text_and_json(lived_in: World) -> None:
    lived_in.gateway.down = "missing"
    for argv, rendered in READ_ONLY[:5]:
        text = lived_in.run(*argv, "--now", NOW)
        data = lived_in.json(*argv, "--now", NOW).data
        assert text.stdout.rstrip("\n").split("\n") == rendered(data), argv
        assert_shape(data, SHAPES[argv[0]])


def test_status_before_anything_ran_says_so_in_both(world: World) -> None:
    text = world.run("status", "--now", NOW)
    data = world.json("status", "--now", NOW).data
    assert "  sync     never run" in text.stdout.split("\n")
    assert data["commands"]["sync"]["last_run"] is None
    assert "  ledger   no ledger yet (nothing synced)" in text.stdout.split("\n")
    assert data["ledger"]["outcomes"] is None


def test_rerank_test_text_is_its_data_rendered(lived_in: World) -> None:
    env = {"AGENT_MEMORY_RERANK_PROVIDER": "jina", "AGENT_MEMORY_RERANK_API_KEY": "sk-test-1"}
    argv = ("rerank-test", "--from-recall", "billing migration")
    text = lived_in.run(*argv, "--now", NOW, env=env)
    data = lived_in.json(*argv, "--now", NOW, env=env).data
    assert text.code == 0, text.stderr
    assert "comparison" in data
    assert text.stdout.rstrip("\n").split("\n") == render.rerank_test(data)
    assert_shape(data, results.RerankTestData)


PAYLOADS = [
    (("surface", "--stdout"), results.SurfaceData),
    (("cron",), results.CronData),
    (("cron", "--format", "systemd"), results.CronData),
    (("doctor", "--print-config", "--server-js", __file__), results.PrintConfigData),
]


@pytest.mark.parametrize(("argv", "shape"), PAYLOADS, ids=[" ".join(a) for a, _ in PAYLOADS])
def test_a_payload_is_printed_verbatim_and_held_whole_in_json(
    lived_in: World, argv: tuple[str, ...], shape: Any
) -> None:
    for quiet in ((), ("-q",)):
        text = lived_in.run(*argv, *quiet, "--now", NOW)
        assert text.code == 0, text.stderr
        data = lived_in.json(*argv, "--now", NOW).data
        assert text.stdout == data["text"].rstrip("\n") + "\n"
        assert_shape(data, shape)


def test_a_note_from_the_shell_reads_the_same_in_text_and_json(lived_in: World) -> None:
    """`memfuse note` writes: each form runs on the same journal, put back between them."""
    journal = lived_in.workspace / "memory" / f"{DAY}.md"
    before = journal.read_bytes()
    text = lived_in.run("note", "Decided: the cutover moves to Saturday", "--now", NOW)
    assert text.code == 0, text.stderr
    journal.write_bytes(before)
    data = lived_in.json("note", "Decided: the cutover moves to Saturday", "--now", NOW).data
    assert text.stdout.rstrip("\n").split("\n") == render.note(data)
    assert_shape(data, results.NoteData)
