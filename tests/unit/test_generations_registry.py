"""Each agent-memory generation is one complete entry (issue 41): a marker, a name for every
tool memfuse calls, a reader for every answer it reads, and a reference server that offers
exactly those tools when it answers as that generation. An entry missing any of these fails
here, before a run meets it."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from memfuse.refserver.tools import tool_list
from memfuse.store.generations import BASELINE, GENERATIONS, Generation, Tools


def incomplete(generation: Generation) -> list[str]:
    """What an entry lacks (empty: it is complete)."""
    lacks = []
    if generation is not BASELINE and not generation.markers:
        lacks.append("a marker tool")
    for f in fields(Tools):
        name = getattr(generation.tools, f.name)
        if f.name != "archive" and not (isinstance(name, str) and name.strip()):
            lacks.append(f"the name of its {f.name} tool")
    if generation.eviction == "archive" and not generation.tools.archive:
        lacks.append("the tool that lists its archive (it evicts into one)")
    for reader in ("read_outcome", "read_memories", "read_reflection"):
        if not callable(getattr(generation, reader, None)):
            lacks.append(reader)
    return lacks


@pytest.mark.parametrize("generation", [*GENERATIONS, BASELINE], ids=lambda g: f"{g.number}.x")
def test_every_generation_entry_is_complete(generation: Generation) -> None:
    assert incomplete(generation) == []


@pytest.mark.parametrize("generation", [*GENERATIONS, BASELINE], ids=lambda g: f"{g.number}.x")
def test_the_reference_server_offers_each_generations_tools(generation: Generation) -> None:
    offered = {t["name"] for t in tool_list(generation.number)}
    assert set(generation.tools.needed()) <= offered
    assert set(generation.markers) <= offered
    if generation.tools.archive:
        assert generation.tools.archive in offered


def test_the_check_finds_an_incomplete_entry() -> None:
    """The completeness check cannot pass for want of looking."""
    five = GENERATIONS[0]
    assert incomplete(replace(five, markers=())) == ["a marker tool"]
    assert incomplete(replace(five, tools=Tools(remember=""))) == [
        "the name of its remember tool",
        "the tool that lists its archive (it evicts into one)",
    ]
