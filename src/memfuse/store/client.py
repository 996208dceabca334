"""The store client: the one voice in which memfuse speaks to agent-memory.

Commands ask it for what they need — `status()`, `remember(memory)`, `recall(query, n)`,
`listing(prefix)`, `reflect()`, `forget(id)`, the generation and its capacity — and get typed
values back (memfuse.store.answers). Only this module knows agent-memory's tool names and
argument shapes; only it and the generations (memfuse.store.generations) read its answers.

Every call goes through the best-effort guard (memfuse.store.gateway.guard): a call that
fails is one warning and `None` (or a failed `Outcome`), never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any, TypeVar

from memfuse.errors import MemfuseError
from memfuse.report import Reporter
from memfuse.store.answers import (
    Outcome,
    Reflection,
    StoredMemory,
    StoreStatus,
    status_of,
)
from memfuse.store.gateway import Gateway, GatewayError, Guard
from memfuse.store.generations import BASELINE, Generation, Tools, generation_of

T = TypeVar("T")

# forget of a memory the store no longer has: the outcome memfuse wanted.
_GONE = ("Memory not found",)
_OFF = ("0", "false", "off", "no")


class StoreError(MemfuseError):
    """The store could not be asked at all (its tools could not be listed)."""


@dataclass(frozen=True)
class NewMemory:
    """One memory to remember at a URI memfuse chose."""

    content: str
    type: str
    uri: str
    source: str

    def arguments(self) -> dict[str, str]:
        return {"content": self.content, "type": self.type, "uri": self.uri, "source": self.source}


@dataclass(frozen=True)
class AutoIngest:
    """Whether the server ingests a workspace by itself (3.x and later), and which one."""

    on: bool
    watched: str


class StoreClient:
    """agent-memory, through the guard. Thread-safe as the guard is."""

    def __init__(
        self,
        gateway: Gateway,
        reporter: Reporter,
        *,
        jobs: int,
        tz: tzinfo | None,
        server_env: Callable[[], Mapping[str, str] | None],
    ) -> None:
        """A client of this transport, every call of it guarded and reported to `reporter`."""
        self._guard = Guard(gateway, reporter, jobs=jobs)
        self._tz = tz
        self._server_env = server_env  # the server entry's environment; None: not readable
        self._tools: list[str] | None = None
        self._generation: Generation | None = None
        self._asked = False  # whether the tools were listed to name the generation

    # --- the run's bookkeeping ---------------------------------------------------------
    @property
    def transport(self) -> str:
        return self._guard.gateway.name

    @property
    def calls(self) -> int:
        return self._guard.calls

    @property
    def busy_ms(self) -> int:
        """Milliseconds spent waiting on the store (what a run's own time leaves out)."""
        return int(self._guard.busy * 1000)

    @property
    def outcome(self) -> str:
        """ok (the store answered), failed (calls were due, none answered) or idle."""
        g = self._guard
        if g.reached:
            return "ok"
        return "failed" if g.calls or g.skipped else "idle"

    def bridge_version(self) -> str | None:
        """The bridge's version when calls go through mcporter; None when it cannot be run.
        Only meaningful when `transport` is "mcporter"."""
        return self._guard.gateway.version()

    def close(self) -> None:
        self._guard.gateway.close()

    # --- what the store is -------------------------------------------------------------
    def tools(self) -> list[str]:
        """The tools the server offers (asked once a run). StoreError when it cannot say."""
        if self._tools is None:
            try:
                self._tools = self._guard.gateway.list_tools()
            except GatewayError as exc:
                raise StoreError(str(exc)) from None
        return self._tools

    def generation(self) -> Generation | None:
        """The store's generation, from its tools; None when they cannot be listed."""
        if self._generation is None:
            try:
                self._generation = generation_of(self.tools())
            except StoreError:
                return None
        return self._generation

    def _reader(self) -> Generation:
        """The generation that names the tools and reads the answers: the known one; else the
        one the tools name, asked once a run after the store has answered (a dead store is not
        asked again) and only where a listing costs no process of its own (mcporter's would:
        it learns on a misread answer); else the baseline, whose names and readers serve every
        generation to 5.x."""
        costly = self._guard.gateway.costly_listing
        if self._generation is None and not self._asked and self._guard.reached and not costly:
            self._asked = True
            self.generation()
        return self._generation or generation_of(self._tools or ())

    @property
    def _tool(self) -> Tools:
        return self._reader().tools

    def limits(self, status: StoreStatus) -> dict[str, int]:
        """The capacity limits in force, by "total" or type (empty: no limit)."""
        generation = self.generation() or BASELINE  # the baseline has no default limits
        return generation.limits(status.limits, self._server_env() or {})

    def auto_ingest(self) -> AutoIngest | None:
        """Whether a 3.x+ server ingests a workspace by itself; None when that does not apply
        or the server entry cannot be read."""
        generation = self.generation()
        env = self._server_env()
        if generation is None or not generation.ingests_by_itself or env is None:
            return None
        on = env.get("AGENT_MEMORY_AUTO_INGEST", "").strip().lower() not in _OFF
        watched = env.get("AGENT_MEMORY_WORKSPACE") or ""
        return AutoIngest(on, watched)

    # --- reads -------------------------------------------------------------------------
    def status(self) -> StoreStatus | None:
        answer = self._guard.call(self._tool.status, {})
        return status_of(answer) if answer is not None else None

    def recall(self, query: str, limit: int) -> list[StoredMemory] | None:
        """The store's own ranked recall; None when it did not answer a list."""
        answer = self._guard.call(self._tool.recall, {"query": query, "limit": limit})
        return self._reader().read_memories(answer, self._tz) if answer is not None else None

    def listing(self, prefix: str) -> list[StoredMemory] | None:
        """Every memory under a URI prefix (recall_path has no limit: the caller caps)."""
        answer = self._guard.call(self._tool.recall_path, {"uri": prefix, "traverse_hops": 0})
        if answer is None:
            return None
        found = self._reader().read_memories(answer, self._tz)
        if found is None and isinstance(answer.get("memory"), dict):
            # a store answering the prefix as one exact URI
            return self._reader().read_memories({"memories": [answer["memory"]]}, self._tz)
        return found

    def lookup(self, uri: str) -> StoredMemory | None:
        """The memory at exactly this URI, or None (not there, or no answer)."""
        answer = self._guard.call(self._tool.recall_path, {"uri": uri})
        memory = (answer or {}).get("memory")
        found = self._reader().read_memories({"memories": [memory]}, self._tz) if memory else None
        return found[0] if found else None

    def uris_under(self, prefixes: Sequence[str]) -> set[str] | None:
        """Every URI the store holds under these prefixes; None when any listing failed."""
        memories = self.memories_under(prefixes)
        return None if memories is None else {m.uri for m in memories if m.uri}

    def memories_under(self, prefixes: Sequence[str]) -> list[StoredMemory] | None:
        """Every memory the store holds under these prefixes, listed concurrently; None when
        any listing failed (a partial view must never pass for the whole)."""
        listings = self.concurrently(*(lambda p=p: self.listing(p) for p in prefixes))
        found: list[StoredMemory] = []
        for listing in listings:
            if listing is None:
                return None
            found += listing
        return found

    def evicted(self, missing: Collection[str]) -> set[str]:
        """Of these URIs the store no longer holds, the ones its capacity rules evicted (by
        design, not a loss): 5.x lists them in its archive; 4.x deletes above its limit, so
        at the limit every missing one counts. Costs calls only when something is missing."""
        if not missing:
            return set()
        generation = self.generation()
        if generation is None or generation.eviction == "none":
            return set()
        if generation.eviction == "archive" and generation.tools.archive:
            answer = self._guard.call(generation.tools.archive, {"action": "list"})
            items = (answer or {}).get("archived")
            archived: set[str] = set()
            for item in items if isinstance(items, list) else []:
                uris = item.get("uris") if isinstance(item, dict) else None
                if isinstance(uris, list):
                    archived.update(u for u in uris if isinstance(u, str))
            return archived & set(missing)
        status = self.status()
        if status is None or status.total is None:
            return set()
        limit = self.limits(status).get("total")
        return set(missing) if limit is not None and status.total >= limit else set()

    def concurrently(self, *reads: Callable[[], T]) -> list[T]:
        """Independent reads, on up to `jobs` workers; results in order."""
        if self._guard.jobs == 1 or len(reads) < 2:
            return [read() for read in reads]
        with ThreadPoolExecutor(max_workers=min(self._guard.jobs, len(reads))) as pool:
            return list(pool.map(lambda read: read(), reads))

    # --- writes ------------------------------------------------------------------------
    def remember(self, memory: NewMemory) -> Outcome:
        answer, why = self._guard.attempt(self._tool.remember, memory.arguments())
        return self._outcome(answer, why)

    def remember_all(self, memories: Sequence[NewMemory]) -> Iterator[tuple[int, Outcome]]:
        """Remember each, concurrently; (index, outcome) as each call finishes, so the caller
        can record every outcome the moment it arrives."""
        tool = self._tool.remember
        calls = [(tool, m.arguments()) for m in memories]
        for index, (answer, why) in self._guard.as_completed(calls):
            yield index, self._outcome(answer, why)

    def _outcome(self, answer: dict[str, Any] | None, why: str | None = None) -> Outcome:
        if answer is None:
            return Outcome("failed", reason=why or "")
        outcome = self._reader().read_outcome(answer)
        if outcome.unexpected is not None and self._generation is None:
            generation = self.generation()  # a generation memfuse reads differently?
            if generation is not None:
                outcome = generation.read_outcome(answer)
        if outcome.unexpected is not None:
            self._guard.reporter.warn(outcome.unexpected, guard=True)
        return outcome

    def forget(self, memory_id: str) -> bool:
        """Delete a memory for good; True when it is gone (or was already)."""
        answer = self._guard.call(
            self._tool.forget, {"id": memory_id, "hard": True}, tolerate=_GONE
        )
        return answer is not None

    def reflect(self) -> Reflection | None:
        """The sleep cycle (decay, tidy, govern); None when it failed."""
        answer, _why = self._guard.answer(self._tool.reflect, {"phase": "all"})
        if answer is None:
            return None
        return self._reader().read_reflection(answer.value, answer.text)
