"""`memfuse recall QUERY`: one ranked answer from the store and the Markdown, for the agent.

Candidates from the store's `recall` (2 × limit, at most 20) and from the local full-text index
of the journals and MEMORY.md (memfuse.recall.index) are merged by reciprocal rank fusion, a
bullet and the memory synced from it counted once; the external reranker re-scores them when
one is configured (any failure: one warning, the fused order), and agent-memory's local
weighting (priority, vitality) orders the reranked result; without a reranker the fused rank
stands (docs/decisions.md 66). With the store down the local index answers
alone, and `data.sources` says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.ledger.ledger import LedgerError, uris_of
from memfuse.recall.index import REBUILT, Hit, RecallIndex
from memfuse.recall.reranker import SearchResult, local_weighting
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import RecallData, RecallRow
from memfuse.store.answers import StoredMemory
from memfuse.store.decay import priority_of
from memfuse.text.similarity import fold_whitespace

RRF_K = 60
STORE_CANDIDATES_MAX = 20


@dataclass(frozen=True)
class Request:
    query: str
    limit: int = 10
    types: tuple[str, ...] = ()
    days: int | None = None


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


def run(ctx: RunContext, request: Request) -> CommandResult:
    s = ctx.settings
    pool = min(2 * request.limit, STORE_CANDIDATES_MAX)
    candidates: dict[str, Candidate] = {}
    sources: list[str] = []
    if _from_store(ctx, request.query, pool, candidates):
        sources.append("agent-memory")
    if _from_index(ctx, request.query, pool, candidates):
        sources.append("journals")

    _address(ctx, candidates.values())
    kept = {k: c for k, c in candidates.items() if _wanted(c, request, s.now)}
    results = [_as_result(k, c) for k, c in sorted(kept.items(), key=lambda kc: -kc[1].fused)]
    rerank = bool(results) and ctx.reranking.wanted(opted_in=True)  # recall's always is
    reranked = ctx.reranking.results(request.query, results) if rerank else None
    # agent-memory's weighting (priority boost × vitality) is applied to a relevance score that
    # spreads (the reranker's); on fused ranks (1/61 vs 1/62) it would only sort by type.
    if reranked is not None:
        ranked = local_weighting(reranked, s.now, limit=request.limit)
    else:
        ranked = results[: request.limit]
    rows = [_row(kept[r.id], r) for r in ranked]
    if "agent-memory" not in sources:
        ctx.reporter.warn("the store did not answer: results come from the journals alone")
    return _result(request, rows, sources, reranked=reranked is not None)


def _from_store(ctx: RunContext, query: str, pool: int, candidates: dict[str, Candidate]) -> bool:
    """The store's own recall, ranked; False when it did not answer."""
    recalled = ctx.store.recall(query, pool)
    if recalled is None:
        return False
    for rank, memory in enumerate(recalled, start=1):
        _add_store(candidates, memory, rank)
    return True


def _address(ctx: RunContext, candidates: Iterable[Candidate]) -> None:
    """Give a stored memory the URI memfuse synced it to where the store's recall did not say
    (2.2 answers none, 3.x and later `null`): an agent can then `recall_path` it."""
    unnamed = {c.id: c for c in candidates if c.id and not c.uri}
    if not unnamed:
        return
    try:
        known = uris_of(ctx.workspace.state, unnamed)
    except (LedgerError, UnsafePath) as exc:
        ctx.reporter.warn(f"{exc}; recall's results carry only the store's own URIs")
        return
    for memory_id, uri in known.items():
        unnamed[memory_id].uri = uri


def _from_index(ctx: RunContext, query: str, pool: int, candidates: dict[str, Candidate]) -> bool:
    """The local index of the Markdown, refreshed first; False when it cannot be used."""
    try:
        index = RecallIndex(ctx.workspace.state)
    except (MemfuseError, OSError) as exc:
        ctx.reporter.warn(f"the local recall index cannot be used: {exc}")
        return False
    try:
        if index.rebuilt:
            ctx.reporter.warn(REBUILT)
        index.refresh(ctx.workspace, ctx.classifier, ctx.reporter.warn)
        for hit in index.search(query, pool):
            _add_local(candidates, hit)
    finally:
        index.close()
    return True


def _result(
    request: Request, rows: list[RecallRow], sources: list[str], *, reranked: bool
) -> CommandResult:
    data: RecallData = {
        "query": request.query, "results": rows, "sources": sources, "reranked": reranked
    }  # fmt: skip
    # The answer is the product, for an agent's prompt: printed even under -q.
    return CommandResult("recall", data, payload="\n".join(render.recall(data)))


def _key(content: str) -> str:
    return fold_whitespace(content).casefold()


def _add_store(candidates: dict[str, Candidate], memory: StoredMemory, rank: int) -> None:
    if not memory.content:
        return
    c = candidates.setdefault(_key(memory.content), Candidate(memory.content, memory.type))
    c.fused += 1 / (RRF_K + rank)
    c.id = memory.id or c.id
    c.uri = memory.uri or c.uri
    c.vitality = memory.vitality if memory.vitality is not None else c.vitality
    c.updated_at = memory.updated_at or c.updated_at
    c.sources = (*c.sources, "store")


def _add_local(candidates: dict[str, Candidate], hit: Hit) -> None:
    c = candidates.setdefault(_key(hit.content), Candidate(hit.content, hit.type))
    c.fused += 1 / (RRF_K + hit.rank)
    c.location = c.location or hit.location
    c.date = c.date or hit.day
    if c.updated_at is None and hit.day:
        c.updated_at = datetime.fromisoformat(hit.day).astimezone()
    c.sources = (*c.sources, "journal")


def _wanted(c: Candidate, request: Request, now: datetime) -> bool:
    if request.types and c.type not in request.types:
        return False
    if request.days is not None and c.updated_at is not None:
        return (now - c.updated_at).total_seconds() <= request.days * 86400
    return True


def _as_result(key: str, c: Candidate) -> SearchResult:
    reason = "+".join(dict.fromkeys(c.sources)) or "local"
    return SearchResult(
        id=key, content=c.content, type=c.type, priority=priority_of(c.type),
        vitality=c.vitality, score=c.fused, updated_at=c.updated_at, match_reason=f"rrf:{reason}",
    )  # fmt: skip


def _row(c: Candidate, r: SearchResult) -> RecallRow:
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
