"""The external reranker: an httpx client for OpenAI/Jina, Cohere v2 and TEI rerank APIs,
`rerank_with_provider`, and agent-memory's local weighting (priority, recency, vitality).
Its errors carry the HTTP status and a short body, never the API key."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memfuse.errors import MemfuseError
from memfuse.report import Reporter, SecretMasker
from memfuse.settings import RerankSettings
from memfuse.store.answers import StoredMemory
from memfuse.store.decay import priority_of, weighted
from memfuse.untrusted import UntrustedJSON, load_json

if TYPE_CHECKING:
    import httpx


# A rerank answer is a score per document: far below this for any list memfuse sends.
BODY_LIMIT = 4 << 20


class RerankError(MemfuseError):
    """The provider gave no usable ranking (callers fall back to their own order)."""


@dataclass(frozen=True)
class Scored:
    index: int
    score: float
    document: str


@dataclass(frozen=True)
class Ranking:
    results: tuple[Scored, ...]  # best first
    latency_ms: int


class RerankClient:
    def __init__(self, settings: RerankSettings, client: httpx.Client | None = None) -> None:
        import httpx  # loaded only by runs that rerank: recall without one starts faster

        self.settings = settings
        base = settings.base_url.rstrip("/")
        cohere = settings.provider == "cohere" and not base.endswith("/v2")
        self.endpoint = f"{base}/v2/rerank" if cohere else f"{base}/rerank"
        self._client = client or httpx.Client(
            timeout=httpx.Timeout(settings.timeout, connect=min(5.0, settings.timeout))
        )
        self._mask = SecretMasker([settings.api_key] if settings.api_key else [])

    def close(self) -> None:
        self._client.close()

    def payload(self, query: str, documents: Sequence[str], top_n: int | None) -> dict[str, Any]:
        if self.settings.provider == "tei":
            return {"query": query, "texts": list(documents), "raw_scores": False}
        body: dict[str, Any] = {
            "model": self.settings.model,
            "query": query,
            "documents": list(documents),
        }
        if top_n is not None:
            body["top_n"] = top_n
        return body

    def rerank(self, query: str, documents: Sequence[str], top_n: int | None = None) -> Ranking:
        """Scores for `documents`, best first. An empty list makes no request."""

        if not documents:
            return Ranking((), 0)
        if not self.settings.api_key:
            raise RerankError("no API key: set AGENT_MEMORY_RERANK_API_KEY or OPENAI_API_KEY")
        key = self.settings.api_key  # `Bearer <key>`, a prefix the key carries not doubled
        headers = {"Authorization": key if key.lower().startswith("bearer ") else f"Bearer {key}"}
        started = time.monotonic()
        status, body = self._post(self.payload(query, documents, top_n), headers)
        latency = int((time.monotonic() - started) * 1000)
        text = body.decode("utf-8", errors="replace")
        if status >= 400:
            shown = " ".join(text.split())[:200]
            raise RerankError(self._mask(f"{self.endpoint} answered HTTP {status}: {shown}"))
        try:
            data = load_json(body, limit=BODY_LIMIT)
        except UntrustedJSON as exc:
            preview = " ".join(text.split())[:120]
            raise RerankError(
                self._mask(f"{self.endpoint} answered unusable JSON ({exc}): {preview!r}")
            ) from None
        return Ranking(parse_scores(data, documents), latency)

    def _post(self, payload: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
        """POST and read the answer, the whole exchange bounded: by `timeout` in all (the
        client's own timeouts are per read, which a server trickling bytes never trips) and by
        BODY_LIMIT bytes. Past the deadline the client is closed and the call has failed; the
        exchange's thread ends at its next read."""
        import httpx

        done: list[tuple[int, bytes]] = []
        failed: list[BaseException] = []

        def exchange() -> None:
            try:
                done.append(self._exchange(payload, headers))
            except BaseException as exc:  # handed to the caller's thread below
                failed.append(exc)

        worker = threading.Thread(target=exchange, name="rerank", daemon=True)
        worker.start()
        worker.join(self.settings.timeout)
        late = f"{self.endpoint} did not answer within {self.settings.timeout:g}s"
        if worker.is_alive():
            self._client.close()
            raise RerankError(late)
        if failed:
            exc = failed[0]
            if isinstance(exc, RerankError):
                raise exc
            if isinstance(exc, httpx.TimeoutException):
                raise RerankError(late) from None
            if isinstance(exc, httpx.HTTPError):
                raise RerankError(
                    self._mask(f"{self.endpoint}: {type(exc).__name__}: {exc}")
                ) from None
            raise exc
        return done[0]

    def _exchange(self, payload: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
        with self._client.stream("POST", self.endpoint, json=payload, headers=headers) as answer:
            body = bytearray()
            for chunk in answer.iter_bytes():
                body += chunk
                if len(body) > BODY_LIMIT:
                    raise RerankError(f"{self.endpoint} answered more than {BODY_LIMIT >> 20} MiB")
            return answer.status_code, bytes(body)


def parse_scores(data: Any, documents: Sequence[str]) -> tuple[Scored, ...]:
    """Jina/OpenAI/Cohere `{"results": [{index, relevance_score}]}` or TEI `[{index, score}]`,
    validated and sorted best first."""
    items = data.get("results") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise RerankError("the response has no results list")
    seen: set[int] = set()
    out = []
    for item in items:
        if not isinstance(item, dict):
            raise RerankError(f"a result is not an object: {item!r:.80}")
        index = item.get("index")
        score: Any = item.get("relevance_score", item.get("score"))
        if type(index) is not int or not 0 <= index < len(documents):  # JSON's: bool is not int
            raise RerankError(
                f"result index {index!r} is out of range for {len(documents)} documents"
            )
        if index in seen:
            raise RerankError(f"result index {index} appears twice")
        try:  # an integer past a float's range is as unusable as an infinity
            value = float(score) if type(score) in (int, float) else math.nan
        except OverflowError:
            value = math.inf
        if not math.isfinite(value):
            raise RerankError(f"result {index} has no finite score ({score!r:.80})")
        seen.add(index)
        out.append(Scored(index, value, documents[index]))
    return tuple(sorted(out, key=lambda s: (-s.score, s.index)))


@dataclass(frozen=True)
class SearchResult:
    """A recall hit, as agent-memory's search pipeline carries it."""

    id: str
    content: str
    type: str
    priority: int
    vitality: float
    score: float
    updated_at: datetime | None = None
    match_reason: str = "bm25"

    @classmethod
    def from_memory(cls, memory: StoredMemory, result_id: str) -> SearchResult:
        """A stored memory as a result; what its answer did not say, agent-memory's defaults
        (the priority its type fixes, full vitality)."""
        return cls(
            id=result_id,
            content=memory.content,
            type=memory.type,
            priority=memory.priority if memory.priority is not None else priority_of(memory.type),
            vitality=memory.vitality if memory.vitality is not None else 1.0,
            score=memory.score if memory.score is not None else 0.0,
            updated_at=memory.updated_at,
        )


def rerank_with_provider(
    results: Sequence[SearchResult],
    query: str,
    client: RerankClient,
    reporter: Reporter,
) -> list[SearchResult]:
    """The API's score replaces the retrieval score (`+rerank` on the reason). Any failure is
    a warning and the original results, unchanged."""
    if not results:
        return list(results)
    try:
        ranking = client.rerank(query, [r.content for r in results])
    except RerankError as exc:
        reporter.warn(f"rerank failed, keeping the original order: {exc}")
        return list(results)
    scores = {s.index: s.score for s in ranking.results}
    return [
        replace(r, score=scores[i], match_reason=f"{r.match_reason}+rerank") if i in scores else r
        for i, r in enumerate(results)
    ]


def local_weighting(
    results: Sequence[SearchResult], now: datetime, *, intent: str = "factual", limit: int = 10
) -> list[SearchResult]:
    """agent-memory's own final ranking: score × priority boost (factual) × recency
    (temporal) × max(0.1, vitality), best first, cut to `limit`."""

    def final(r: SearchResult) -> float:
        age = None if r.updated_at is None else (now - r.updated_at).total_seconds() / 86400
        return weighted(r.score, r.priority, r.vitality, age, intent)

    scored = [replace(r, score=final(r)) for r in results]
    return sorted(scored, key=lambda r: -r.score)[: max(limit, 0)]
