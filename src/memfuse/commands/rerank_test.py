"""`memfuse rerank-test`: exercise the configured reranker and judge its health (a failed
call or check exits non-zero)."""

from __future__ import annotations

from dataclasses import dataclass

from memfuse.errors import ExitCode, MemfuseError
from memfuse.recall.reranker import (
    Ranking,
    RerankError,
    SearchResult,
    local_weighting,
    rerank_with_provider,
)
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import RerankCheck, RerankTestData

# With no documents given, a probe whose right answer is known: the first document.
PROBE_QUERY = "What is the capital of France?"
PROBE_DOCS = (
    "Paris is the capital and largest city of France.",
    "Bananas are a good source of potassium.",
    "The Great Wall of China is visible from low orbit only under ideal conditions.",
    "Python is a programming language created by Guido van Rossum.",
)


@dataclass(frozen=True)
class RerankTestRequest:
    query: str
    documents: tuple[str, ...]
    top_n: int | None = None
    from_recall: bool = False
    recall_limit: int = 10


def _checks(ranking: Ranking | None, error: str | None, probe: bool) -> list[RerankCheck]:
    checks: list[RerankCheck] = [
        {
            "name": "call",
            "ok": error is None,
            "detail": error or f"{ranking.latency_ms if ranking else 0} ms",
        }
    ]
    if ranking is None:
        return checks
    scores = [s.score for s in ranking.results]
    distinct = len(set(scores)) > 1 or len(scores) < 2
    constant = f"every document scored {scores[0]:g}: a broken deployment answers a constant"
    checks.append(
        {"name": "scores vary", "ok": distinct, "detail": "scores differ" if distinct else constant}
    )
    if probe and ranking.results:
        top = ranking.results[0]
        right = top.index == 0 and distinct
        detail = (
            "the relevant probe document ranked first"
            if right
            else f"an irrelevant document ranked first: {top.document!r}"
        )
        checks.append({"name": "relevant first", "ok": right, "detail": detail})
    return checks


def _recall(ctx: RunContext, request: RerankTestRequest) -> list[SearchResult]:
    recalled = ctx.store.recall(request.query, request.recall_limit)
    if recalled is None:
        raise MemfuseError("--from-recall: the store's recall failed (see the warning above)")
    return [SearchResult.from_memory(m, m.id or "") for m in recalled]


def run(ctx: RunContext, request: RerankTestRequest) -> CommandResult:
    s = ctx.settings.rerank
    if not s.enabled:
        raise MemfuseError(
            f"the reranker is disabled (provider {s.provider!r},"
            f" key {'set' if s.api_key else 'not set'}): set AGENT_MEMORY_RERANK_PROVIDER"
            " (openai, jina, cohere or tei) and AGENT_MEMORY_RERANK_API_KEY"
        )
    client = ctx.seams.rerank_factory(s)
    try:
        recalled = _recall(ctx, request) if request.from_recall else []
        documents = tuple(r.content for r in recalled) if request.from_recall else request.documents
        probe = not documents and not request.from_recall
        query = PROBE_QUERY if probe else request.query
        documents = PROBE_DOCS if probe else documents
        ranking: Ranking | None = None
        error = None
        try:
            ranking = client.rerank(query, documents, request.top_n)
        except RerankError as exc:
            error = str(exc)
        comparison = None
        if request.from_recall and ranking is not None:
            now = ctx.settings.now
            before = local_weighting(recalled, now, limit=request.recall_limit)
            after = local_weighting(
                rerank_with_provider(recalled, query, client, ctx.reporter),
                now,
                limit=request.recall_limit,
            )
            comparison = {
                "without": [r.content for r in before],
                "with": [r.content for r in after],
            }
    finally:
        client.close()
    checks = _checks(ranking, error, probe)
    data: RerankTestData = {
        "provider": s.provider, "model": s.model, "endpoint": client.endpoint,
        "latency_ms": ranking.latency_ms if ranking else None, "query": query,
        "results": [{"index": r.index, "score": r.score, "document": r.document}
                    for r in (ranking.results if ranking else ())],
        "checks": checks,
    }  # fmt: skip
    if comparison is not None:
        data["comparison"] = comparison
    failed = [c for c in checks if not c["ok"]]
    if failed:
        data["error"] = "; ".join(f"{c['name']}: {c['detail']}" for c in failed)
    return CommandResult(
        "rerank-test", data, tuple(render.rerank_test(data)),
        exit_code=ExitCode.FATAL if failed else ExitCode.OK,
    )  # fmt: skip
