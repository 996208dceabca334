"""The external reranker's step, shared by recall, surface and tidy (DD-0005).

recall reranks its fused candidates; surface and tidy rerank the store's recall of their own
query: twice as many candidates as they keep, re-scored by the reranker, ordered by
agent-memory's local weighting, the best kept. Best-effort like every outside call: a failure,
or a reranker that scores every document alike, is one warning and the unreranked order.
"""

from __future__ import annotations

from memfuse.recall.rerank import SearchResult, local_weighting, rerank_with_provider
from memfuse.run.context import RunContext
from memfuse.store.answers import StoredMemory


def rerank_results(
    ctx: RunContext, query: str, results: list[SearchResult]
) -> list[SearchResult] | None:
    """The results re-scored by the external reranker, or None (keep the order you have) when
    it failed or gave no usable order."""
    client = ctx.seams.rerank_factory(ctx.settings.rerank)
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


def candidates(limit: int, *, rerank: bool) -> int:
    """How many memories to ask the store for: twice the limit when the reranker chooses."""
    return 2 * limit if rerank else limit


def rerank_recalled(
    ctx: RunContext,
    query: str,
    recalled: list[StoredMemory] | None,
    limit: int,
    *,
    rerank: bool,
) -> list[StoredMemory] | None:
    """The store's recall cut to its best `limit` memories.

    With `rerank`, the reranker, then agent-memory's weighting, choose them; otherwise, or when
    the reranker fails, the store's own first `limit`. None stays None: the store did not
    answer.
    """
    if recalled is None:
        return None
    if not rerank:
        return recalled[:limit]  # never more than asked for, whoever answers
    kept = [m for m in recalled if m.content.strip()]
    results = [SearchResult.from_memory(m, str(n)) for n, m in enumerate(kept)]
    scored = rerank_results(ctx, query, results) if results else None
    if scored is None:
        return recalled[:limit]
    best = local_weighting(scored, ctx.settings.now, limit=limit)
    return [kept[int(r.id)] for r in best]
