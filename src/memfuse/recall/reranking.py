"""The external reranker's step, shared by recall, surface and tidy (DD-0005).

Best-effort like every outside call: a failure, or a reranker that scores every document alike,
is one warning and the unreranked order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from memfuse.recall.reranker import (
    RerankClient,
    SearchResult,
    local_weighting,
    rerank_with_provider,
)
from memfuse.report import Reporter
from memfuse.settings import RerankSettings
from memfuse.store.answers import StoredMemory

RerankFactory = Callable[[RerankSettings], RerankClient]


def candidates(limit: int, *, rerank: bool) -> int:
    """How many memories to ask the store for: twice the limit when the reranker chooses."""
    return 2 * limit if rerank else limit


@dataclass(frozen=True)
class Reranking:
    """The external reranker as one run uses it: opened per use, its failures reported."""

    settings: RerankSettings
    open: RerankFactory
    reporter: Reporter
    now: datetime

    def wanted(self, opted_in: bool) -> bool:
        """Whether a command's recall is reranked: it opted in and a reranker is configured."""
        return opted_in and self.settings.enabled

    def results(self, query: str, results: list[SearchResult]) -> list[SearchResult] | None:
        """The results re-scored by the external reranker, or None (keep the order you have)
        when it failed or gave no usable order."""
        client = self.open(self.settings)
        try:
            scored = rerank_with_provider(results, query, client, self.reporter)
        finally:
            client.close()
        if [r.match_reason for r in scored] == [r.match_reason for r in results]:
            return None  # the provider failed and said so, or changed nothing
        if len(results) > 1 and len({r.score for r in scored}) == 1:
            self.reporter.warn(
                "the reranker gave every document the same score (a broken deployment?):"
                " keeping the unreranked order"
            )
            return None
        return scored

    def recalled(
        self, query: str, recalled: list[StoredMemory] | None, limit: int, *, rerank: bool
    ) -> list[StoredMemory] | None:
        """The store's recall cut to its best `limit` memories: with `rerank`, as the reranker
        then agent-memory's weighting choose them (twice as many asked: `candidates`)."""
        if recalled is None:
            return None
        if not rerank:
            return recalled[:limit]  # never more than asked for, whoever answers
        kept = [m for m in recalled if m.content.strip()]
        results = [SearchResult.from_memory(m, str(n)) for n, m in enumerate(kept)]
        scored = self.results(query, results) if results else None
        if scored is None:
            return recalled[:limit]
        best = local_weighting(scored, self.now, limit=limit)
        return [kept[int(r.id)] for r in best]
