"""The external reranker's step, shared by recall, surface and tidy (DD-0005).

recall reranks its fused candidates; surface and tidy rerank the store's recall of their own
query: twice as many candidates as they keep, re-scored by the reranker, ordered by
agent-memory's local weighting, the best kept. Best-effort like every outside call: a failure,
or a reranker that scores every document alike, is one warning and the unreranked order.
"""

from __future__ import annotations

from typing import Any

from memfuse.recall.rerank import SearchResult, local_weighting, rerank_with_provider
from memfuse.run.context import RunContext
from memfuse.store.answers import memory_from
from memfuse.store.decay import priority_of


def rerank_results(
    ctx: RunContext, query: str, results: list[SearchResult]
) -> list[SearchResult] | None:
    """The results re-scored by the external reranker, or None (keep the order you have) when
    it failed or gave no usable order."""
    client = ctx.rerank_factory(ctx.settings.rerank)
    try:
        scored = rerank_with_provider(results, query, client, ctx.reporter)
    finally:
        client.close()
    if [r.match_reason for r in scored] == [r.match_reason for r in results]:
        return None  # the provider failed and said so, or changed nothing
    if len(results) > 1 and len({r.score for r in scored}) == 1:
        ctx.reporter.warn(
            "the reranker gave every document the same score (a broken deployment?):"
            " keeping the unreranked order"
        )
        return None
    return scored


def reranking(ctx: RunContext, wanted: bool) -> bool:
    """Whether a command's recall is reranked: it wants it (its opt-out is not set) and a
    reranker is configured."""
    return wanted and ctx.settings.rerank.enabled


def recall_arguments(query: str, limit: int, *, rerank: bool) -> dict[str, Any]:
    """The store's `recall` arguments: twice the candidates when the reranker will choose."""
    return {"query": query, "limit": 2 * limit if rerank else limit}


def rerank_answer(
    ctx: RunContext, query: str, answer: dict[str, Any] | None, limit: int, *, rerank: bool
) -> dict[str, Any] | None:
    """A recall answer cut to its best `limit` memories, in the store's shape.

    With `rerank`, the reranker, then agent-memory's weighting, choose them (the answer gets
    `"reranked": true`); otherwise, or when the reranker fails, the store's own first `limit`.
    None stays None: the store did not answer.
    """
    raw = answer.get("memories") if answer is not None else None
    if answer is None or not isinstance(raw, list):
        return answer
    if not rerank:
        return {**answer, "memories": raw[:limit]}  # never more than asked for, whoever answers
    tz = ctx.settings.now.tzinfo
    usable = [(m, memory_from(m, tz)) for m in raw]
    kept = [(m, mem) for m, mem in usable if mem is not None and mem.content.strip()]
    results = [
        SearchResult(
            id=str(n), content=mem.content, type=mem.type or "event",
            priority=mem.priority if mem.priority is not None else priority_of(mem.type or "event"),
            vitality=mem.vitality if mem.vitality is not None else 1.0,
            score=mem.score if mem.score is not None else 0.0, updated_at=mem.updated_at,
        )
        for n, (_m, mem) in enumerate(kept)
    ]  # fmt: skip
    scored = rerank_results(ctx, query, results) if results else None
    if scored is None:
        return {**answer, "memories": raw[:limit]}
    best = local_weighting(scored, ctx.settings.now, limit=limit)
    return {**answer, "memories": [kept[int(r.id)][0] for r in best], "reranked": True}
