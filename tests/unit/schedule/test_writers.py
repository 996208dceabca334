"""Runs that read MEMORY.md stay out of the minute another job rewrites it."""

from __future__ import annotations

from memfuse.schedule import writers
from memfuse.schedule.base import MemoryRewriter
from memfuse.schedule.openclaw.host import busy_times
from tests.unit.schedule.samples import memfuse_schedule

# As a local Gateway of openclaw 2026.9.6 lists it (`openclaw cron list --all --json`).
DREAMING = {
    "id": "4d9258fb-47a1-4e9e-b801-a011e85a030c",
    "declarationKey": "memory-core:memory-dreaming-promotion",
    "name": "Memory Dreaming Promotion",
    "enabled": True,
    "schedule": {"kind": "cron", "expr": "0 3 * * *"},
    "payload": {
        "kind": "agentTurn",
        "message": "__openclaw_memory_core_short_term_promotion_dream__",
    },
}


def test_the_dreaming_sweep_is_found_by_name_key_or_payload() -> None:
    assert [(w.name, w.times) for w in busy_times([DREAMING])] == [
        ("Memory Dreaming Promotion", ((3, 0),))
    ]
    renamed = {**DREAMING, "name": "sweep", "schedule": {"kind": "cron", "expr": "0 0 4 * * *"}}
    assert [(w.name, w.times) for w in busy_times([renamed])] == [
        ("sweep", ((4, 0),))
    ]  # six fields: seconds first
    assert busy_times([{**DREAMING, "enabled": False}]) == []
    assert busy_times([{"name": "x", "schedule": {"kind": "cron", "expr": "0 3 * * *"}}]) == []


def test_tidy_moves_half_an_hour_at_a_time_until_its_minute_is_free() -> None:
    schedule = memfuse_schedule()
    busy = [MemoryRewriter("a", ((3, 0),)), MemoryRewriter("b", ((3, 30),))]
    moved, notes = writers.clear_of(schedule, busy)
    tidy = next(r for r in moved.runs if r.name == "tidy")
    assert tidy.times == ((4, 0),) and "04:00" in tidy.comment
    assert notes == [
        "tidy moved from 03:00 to 04:00: 'a' at 03:00, 'b' at 03:30 rewrites MEMORY.md in that"
        " minute"
    ]
    assert [r.times for r in moved.runs if r.name != "tidy"] == [
        r.times for r in schedule.runs if r.name != "tidy"
    ]


def test_nothing_moves_when_no_minute_is_shared() -> None:
    schedule = memfuse_schedule()
    assert writers.clear_of(schedule, [MemoryRewriter("a", ((2, 0),))]) == (schedule, [])
