"""agent-memory's generations, 2.x to 5.x: how each is recognised, what it answers differently,
and its capacity rules. Facts in docs/reference.md.

`serverInfo.version` is stale in every release, so a generation is recognised by the first
tool it added. Each `Generation` is one entry of GENERATIONS carrying everything memfuse must
know of it: its marker, the name of each tool memfuse calls (`Tools`), the readers of its
answers (the defaults read every known generation: their differences are tolerated field by
field in memfuse.store.answers), how it joins a merge, and its capacity rules. A new
generation — even one whose write tool is renamed and whose ids come in another shape — is one
entry here and nothing else in memfuse moves (tests/unit/flows/test_generations_flow.py adds
one; tests/unit/test_generations_registry.py fails on an incomplete entry); the reference
server, a stand-in for tests, is taught to answer as it behind `AGENT_MEMORY_COMPAT`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import tzinfo
from typing import Any, Literal

from memfuse.store.answers import (
    Outcome,
    Reflection,
    StoredMemory,
    memories_in,
    outcome_of,
    reflection_of,
)

Eviction = Literal["none", "archive", "delete"]


def limit_variable(name: str) -> str:
    """The server variable that sets a capacity limit ("total" or a type)."""
    return "AGENT_MEMORY_MAX_" + ("MEMORIES" if name == "total" else name.upper())


@dataclass(frozen=True)
class Tools:
    """The name of each tool memfuse calls, by what memfuse calls it for (2.2's names by
    default: every generation to 5.x kept them)."""

    remember: str = "remember"  # write one memory at a URI
    recall: str = "recall"  # the store's own ranked search
    recall_path: str = "recall_path"  # the memory at a URI, or every one under a prefix
    reflect: str = "reflect"  # the sleep cycle: decay, tidy, govern
    status: str = "status"  # counts and capacity
    forget: str = "forget"  # delete one memory by id
    archive: str | None = None  # what capacity eviction moved aside (5.x), if anything

    def needed(self) -> tuple[str, ...]:
        """The tools the server must offer for memfuse to work (`doctor` checks them)."""
        return tuple(
            name for f in fields(self) if f.name != "archive" and (name := getattr(self, f.name))
        )


OutcomeReader = Callable[[Mapping[str, Any]], Outcome]
MemoriesReader = Callable[[Any, "tzinfo | None"], "list[StoredMemory] | None"]
ReflectionReader = Callable[[Any, str], Reflection]


@dataclass(frozen=True)
class Generation:
    """One generation of agent-memory, as memfuse must treat it."""

    number: int
    markers: tuple[str, ...] = ()  # tools this generation added: any one of them names it
    tools: Tools = field(default_factory=Tools)
    # How its answers read: remember's outcome, a list of memories, reflect's report.
    read_outcome: OutcomeReader = outcome_of
    read_memories: MemoriesReader = memories_in
    read_reflection: ReflectionReader = reflection_of
    # Capacity limits when `status` does not report them (4.x), by "total" or type.
    default_limits: Mapping[str, int] = field(default_factory=dict)
    # What reflect does with memories above capacity: nothing, move them to an archive that
    # the `archive` tool lists (5.x), or delete them (4.x).
    eviction: Eviction = "none"
    ingests_by_itself: bool = False  # watches the host's workspace unless told not to (3.x+)
    # How a `merged` write joins the new text to the one held: `old\n\n[Updated] new` to 3.x,
    # `old；new` (a full-width semicolon) from 4.x.
    merge_separator: str = "\n\n[Updated] "

    def limits(self, reported: Mapping[str, int], server_env: Mapping[str, str]) -> dict[str, int]:
        """The capacity limits in force: what status reports, else this generation's defaults
        as the server's environment sets them."""
        if reported:
            return dict(reported)
        found = {}
        for name, default in self.default_limits.items():
            value = server_env.get(limit_variable(name), "").strip()
            found[name] = int(value) if value.isdigit() else default
        return found


# 4.x's capacity when its status does not say (AGENT_MEMORY_MAX_MEMORIES); 5.x's per type,
# which its status reports (both also the reference server's defaults).
GEN4_LIMITS = {"total": 200}
CAPACITY_5 = {"identity": None, "emotion": 50, "knowledge": 250, "event": 50, "total": 350}

# Newest first: the first whose marker the server offers is its generation.
GENERATIONS: tuple[Generation, ...] = (
    Generation(
        5,
        ("archive",),
        Tools(archive="archive"),
        eviction="archive",
        ingests_by_itself=True,
        merge_separator="；",
    ),
    Generation(
        4,
        ("reindex",),
        default_limits=GEN4_LIMITS,
        eviction="delete",
        ingests_by_itself=True,
        merge_separator="；",
    ),
    Generation(3, ("ingest", "surface"), ingests_by_itself=True),
)
BASELINE = Generation(2)


def generation_of(tools: Iterable[str], known: Iterable[Generation] | None = None) -> Generation:
    """The generation whose tools the server offers (2.x when none of the later ones)."""
    offered = set(tools)
    for generation in GENERATIONS if known is None else known:
        if offered & set(generation.markers):
            return generation
    return BASELINE
