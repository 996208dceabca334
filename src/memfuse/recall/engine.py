"""Recall's engine: one ranked answer from the Markdown and the store, for the agent.

Candidates from the local index and the store's own `recall` are merged by reciprocal rank
fusion, a bullet and the memory synced from it counted once. A bullet is ranked by the local
index, which searches its text better than the store (docs/recall-quality.md); the store
ranks the memories the Markdown does not hold, and a synced bullet the index did not find
comes after what it did. A configured reranker re-scores the result (a failure: one warning,
the fused order). The engine is given its `RecallServices`, and knows no command, run or ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime

from memfuse.errors import MemfuseError
from memfuse.recall.answer import AnswerRow, RecallAnswer
from memfuse.recall.index import Hit, RecallIndex
from memfuse.recall.meaning import by_words, with_meaning
from memfuse.recall.reranker import SearchResult, local_weighting
from memfuse.recall.reranking import Reranking
from memfuse.recall.semantic import Embedder
from memfuse.store.answers import StoredMemory
from memfuse.store.decay import priority_of
from memfuse.text.similarity import fold_whitespace
from memfuse.workspace.position import JOURNAL_PREFIXES, SOURCE_PREFIX

RRF_K = 60
STORE_CANDIDATES_MAX = 20
LOCAL_CANDIDATES = 50  # the local index is cheap to ask deep: fusion and filters need room
# How much a rank counts in the fusion: the local index's; the store's for a memory the
# Markdown does not hold; the store's for a synced bullet the local index did not return.
LOCAL_WEIGHT = 1.0
STORE_OWN_WEIGHT = 1.0
STORE_SYNCED_WEIGHT = 0.5
STORE_DOWN = "the store did not answer: results come from the journals alone"
QUESTION_MAX = 2000  # characters: a question, not a document (every term of it is searched)
# The stages `--without` can switch off, for the benchmark that measures each one.
STAGES = ("store", "index", "near", "dates", "rerank", "meaning")


@dataclass(frozen=True)
class RecallRequest:
    query: str
    limit: int = 10
    types: tuple[str, ...] = ()
    days: int | None = None
    without: frozenset[str] = field(default_factory=frozenset)
    since: date | None = None  # the journal day (or the store's update) from, inclusive
    until: date | None = None  # … to, inclusive


StoreRecall = Callable[[str, int], list[StoredMemory] | None]
# memory ids → the URI memfuse synced each to (the ledger's); MemfuseError when unreadable
UriLookup = Callable[[set[str]], dict[str, str]]


@dataclass(frozen=True)
class RecallServices:
    """What a question is answered with. `store` is called only when the store is asked (it
    opens the session on first use); `index` None: the journals are not searched."""

    store: StoreRecall
    index: RecallIndex | None
    reranking: Reranking
    uris: UriLookup
    warn: Callable[[str], None]
    now: datetime
    embedder: Embedder | None = None  # the model of meaning (the `semantic` extra), if any


@dataclass
class Candidate:
    content: str
    type: str
    fused: float = 0.0
    id: str | None = None
    uri: str | None = None
    location: str | None = None
    date: str | None = None
    vitality: float = 1.0
    updated_at: datetime | None = None
    sources: tuple[str, ...] = ()
    store_rank: int | None = None
    synced: bool = False  # the store's copy of a journal bullet (its URI or source says so)


def ask(services: RecallServices, request: RecallRequest) -> RecallAnswer:
    """The best `request.limit` results for a question, best first."""
    pool = min(2 * request.limit, STORE_CANDIDATES_MAX)
    candidates: dict[str, Candidate] = {}
    sources: list[str] = []
    index = services.index if "index" not in request.without else None
    recalled = services.store(request.query, pool) if "store" not in request.without else None
    if recalled is not None:  # the store's own recall, ranked
        for rank, memory in enumerate(recalled, start=1):
            _add_store(candidates, memory, rank)
        sources.append("agent-memory")
    if index is not None:
        depth = max(LOCAL_CANDIDATES, pool)
        words = index.search(request.query, depth, services.now.date(), request.without)
        if services.embedder is not None and "meaning" not in request.without:
            local = with_meaning(index, services.embedder, request.query, words, services.warn)
        else:
            local = by_words(words)
        for hit, found in local[:depth]:  # what meaning adds past the words' depth ranks last
            _add_local(candidates, hit, found)
        sources.append("journals")

    _address(services, candidates.values())
    for c in candidates.values():
        c.fused += _store_share(c, index_answered=index is not None)
    kept = {k: c for k, c in candidates.items() if _wanted(c, request, services.now)}
    results = [_as_result(k, c) for k, c in sorted(kept.items(), key=lambda kc: -kc[1].fused)]
    reranking = services.reranking
    rerank = bool(results) and "rerank" not in request.without
    rerank = rerank and reranking.wanted(opted_in=True)  # recall's always is
    reranked = reranking.results(request.query, results) if rerank else None
    # agent-memory's weighting (priority boost × vitality) is applied to a relevance score that
    # spreads (the reranker's); on fused ranks (1/61 vs 1/62) it would only sort by type.
    if reranked is not None:
        ranked = local_weighting(reranked, services.now, limit=request.limit)
    else:
        ranked = results[: request.limit]
    rows = [_row(kept[r.id], r) for r in ranked]
    if "agent-memory" not in sources and "store" not in request.without:
        services.warn(STORE_DOWN)
    return {
        "query": request.query, "results": rows, "sources": sources,
        "reranked": reranked is not None,
    }  # fmt: skip


def _address(services: RecallServices, candidates: Iterable[Candidate]) -> None:
    """Give a stored memory the URI memfuse synced it to where the store's recall did not say
    (2.2 answers none, 3.x and later `null`): an agent can then `recall_path` it."""
    unnamed = {c.id: c for c in candidates if c.id and not c.uri}
    if not unnamed:
        return
    try:
        known = services.uris(set(unnamed))
    except MemfuseError as exc:
        services.warn(f"{exc}; recall's results carry only the store's own URIs")
        return
    for memory_id, uri in known.items():
        if memory_id in unnamed:
            unnamed[memory_id].uri = uri


def _key(content: str) -> str:
    return fold_whitespace(content).casefold()


def _add_store(candidates: dict[str, Candidate], memory: StoredMemory, rank: int) -> None:
    if not memory.content:
        return
    c = candidates.setdefault(_key(memory.content), Candidate(memory.content, memory.type))
    c.store_rank = rank if c.store_rank is None else min(c.store_rank, rank)
    c.synced = c.synced or (memory.source or "").startswith(SOURCE_PREFIX)
    c.id = memory.id or c.id
    c.uri = memory.uri or c.uri
    c.vitality = memory.vitality if memory.vitality is not None else c.vitality
    c.updated_at = memory.updated_at or c.updated_at
    c.sources = (*c.sources, "store")


def _store_share(c: Candidate, *, index_answered: bool) -> float:
    """What the store's rank adds to a candidate's fused score (the module's docstring)."""
    if c.store_rank is None:
        return 0.0
    if not index_answered:
        return 1.0 / (RRF_K + c.store_rank)  # the store's order stands
    if "journal" in c.sources or "meaning" in c.sources:
        return 0.0  # the local index ranked this text already, by its words or its meaning
    synced = c.synced or (c.uri or "").startswith(JOURNAL_PREFIXES)
    weight = STORE_SYNCED_WEIGHT if synced else STORE_OWN_WEIGHT
    return weight / (RRF_K + c.store_rank)


def _add_local(candidates: dict[str, Candidate], hit: Hit, found: tuple[str, ...]) -> None:
    """A bullet the local index found (by words, meaning or both: `found`), at its rank."""
    c = candidates.setdefault(_key(hit.content), Candidate(hit.content, hit.type))
    c.fused += LOCAL_WEIGHT / (RRF_K + hit.rank)
    c.location = c.location or hit.location
    c.date = c.date or hit.day
    if c.updated_at is None and hit.day:
        c.updated_at = datetime.fromisoformat(hit.day).astimezone()
    c.sources = (*c.sources, *found)


def _wanted(c: Candidate, request: RecallRequest, now: datetime) -> bool:
    """The filters; a timeless fact (MEMORY.md's, with no day) passes the time filters."""
    if request.types and c.type not in request.types:
        return False
    if c.updated_at is None:
        return True
    if request.days is not None and (now - c.updated_at).total_seconds() > request.days * 86400:
        return False
    day = date.fromisoformat(c.date) if c.date else c.updated_at.date()
    if request.since is not None and day < request.since:
        return False
    return request.until is None or day <= request.until


def _as_result(key: str, c: Candidate) -> SearchResult:
    reason = "+".join(dict.fromkeys(c.sources)) or "local"
    return SearchResult(
        id=key, content=c.content, type=c.type, priority=priority_of(c.type),
        vitality=c.vitality, score=c.fused, updated_at=c.updated_at, match_reason=f"rrf:{reason}",
    )  # fmt: skip


def _row(c: Candidate, r: SearchResult) -> AnswerRow:
    when = c.date or (c.updated_at.date().isoformat() if c.updated_at else None)
    return {
        "content": c.content,
        "score": round(r.score, 6),
        "reason": r.match_reason,
        "type": c.type,
        "id": c.id,
        "uri": c.uri,
        "location": c.location,
        "date": when,
    }
