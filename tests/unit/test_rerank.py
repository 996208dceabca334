from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import respx

from memfuse.recall.reranker import (
    RerankClient,
    RerankError,
    SearchResult,
    local_weighting,
    rerank_with_provider,
)
from memfuse.report import Reporter
from memfuse.settings import RerankSettings

KEY = "sk-unit-SECRET-0123456789"
BASE = "https://rerank.test/v1"
DOCS = ["alpha doc", "beta doc", "gamma doc"]


def client(provider: str = "openai", key: str = KEY, base: str = BASE) -> RerankClient:
    return RerankClient(RerankSettings(provider=provider, api_key=key, base_url=base, timeout=2))


@respx.mock
def test_openai_jina_shape_is_mapped_by_index_and_sorted() -> None:
    route = respx.post(f"{BASE}/rerank").respond(
        json={
            "results": [
                {"index": 2, "relevance_score": 0.9},
                {"index": 0, "relevance_score": 0.1},
                {"index": 1, "relevance_score": 0.5},
            ]
        }
    )
    ranking = client().rerank("q", DOCS, top_n=3)
    assert [(s.index, s.document) for s in ranking.results] == [
        (2, "gamma doc"),
        (1, "beta doc"),
        (0, "alpha doc"),
    ]
    sent = json.loads(route.calls[0].request.content)
    assert sent == {"model": "Qwen/Qwen3-Reranker-8B", "query": "q", "documents": DOCS, "top_n": 3}
    assert route.calls[0].request.headers["Authorization"] == f"Bearer {KEY}"


@respx.mock
def test_cohere_v2_endpoint_and_shape() -> None:
    route = respx.post("https://api.cohere.test/v2/rerank").respond(
        json={"results": [{"index": 1, "relevance_score": 0.7}], "meta": {}}
    )
    ranking = client("cohere", base="https://api.cohere.test").rerank("q", DOCS)
    assert route.called
    assert [s.index for s in ranking.results] == [1]
    assert "top_k" not in json.loads(route.calls[0].request.content)


@respx.mock
def test_tei_bare_list_shape() -> None:
    route = respx.post(f"{BASE}/rerank").respond(
        json=[{"index": 0, "score": 0.2}, {"index": 1, "score": 0.8}]
    )
    ranking = client("tei").rerank("q", DOCS[:2])
    assert [s.index for s in ranking.results] == [1, 0]
    assert json.loads(route.calls[0].request.content)["texts"] == DOCS[:2]


@respx.mock
def test_a_key_already_prefixed_with_bearer_is_sent_once() -> None:
    route = respx.post(f"{BASE}/rerank").respond(json={"results": []})
    client(key=f"Bearer {KEY}").rerank("q", DOCS)
    assert route.calls[0].request.headers["Authorization"] == f"Bearer {KEY}"


@respx.mock
def test_empty_documents_send_no_request() -> None:
    route = respx.post(f"{BASE}/rerank").respond(json={"results": []})
    assert client().rerank("q", []).results == ()
    assert not route.called


@pytest.mark.parametrize("status", [401, 429, 500])
@respx.mock
def test_http_errors_carry_status_and_body_but_never_the_key(status: int) -> None:
    respx.post(f"{BASE}/rerank").respond(status, text=f"denied for key {KEY} (quota)")
    with pytest.raises(RerankError) as caught:
        client().rerank("q", DOCS)
    message = str(caught.value)
    assert f"HTTP {status}" in message
    assert "quota" in message
    assert KEY not in message


@respx.mock
def test_timeout() -> None:
    respx.post(f"{BASE}/rerank").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(RerankError, match="did not answer within 2s"):
        client().rerank("q", DOCS)


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ('{"results": [', "unusable JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested"),
        ('{"results": [{"index": 7, "relevance_score": 0.5}]}', "out of range"),
        ('{"results": [{"index": -1, "relevance_score": 0.5}]}', "out of range"),
        ('{"results": [{"index": 0, "relevance_score": NaN}]}', "finite"),
        ('{"results": [{"index": 0, "relevance_score": "high"}]}', "finite"),
        # an integer past a float's range (a 401-digit score) once crashed the run
        ('{"results": [{"index": 0, "relevance_score": 1' + "0" * 400 + "}]}", "finite"),
        (
            '{"results": [{"index": 0, "relevance_score": 1}, {"index": 0, "relevance_score": 2}]}',
            "twice",
        ),
        ('{"data": []}', "no results list"),
    ],
)
@respx.mock
def test_invalid_responses_are_rejected(body: str, fragment: str) -> None:
    respx.post(f"{BASE}/rerank").respond(
        200, text=body, headers={"content-type": "application/json"}
    )
    with pytest.raises(RerankError, match=fragment):
        client().rerank("q", DOCS)


NOW = datetime(2026, 3, 1, tzinfo=UTC)
HITS = [
    SearchResult("a", "alpha doc", "event", 3, 1.0, 5.0, NOW),
    SearchResult("b", "beta doc", "knowledge", 2, 1.0, 4.0, NOW),
    SearchResult("c", "gamma doc", "identity", 0, 1.0, 1.0, NOW - timedelta(days=30)),
]


@respx.mock
def test_rerank_with_provider_replaces_scores_and_marks_the_reason() -> None:
    respx.post(f"{BASE}/rerank").respond(
        json={
            "results": [
                {"index": 0, "relevance_score": 0.1},
                {"index": 1, "relevance_score": 0.9},
                {"index": 2, "relevance_score": 0.5},
            ]
        }
    )
    out = rerank_with_provider(HITS, "q", client(), Reporter())
    assert [(r.id, r.score, r.match_reason) for r in out] == [
        ("a", 0.1, "bm25+rerank"), ("b", 0.9, "bm25+rerank"), ("c", 0.5, "bm25+rerank"),
    ]  # fmt: skip


@respx.mock
def test_a_failing_provider_keeps_the_original_order_with_a_warning() -> None:
    respx.post(f"{BASE}/rerank").respond(500, text="boom")
    reporter = Reporter()
    out = rerank_with_provider(HITS, "q", client(), reporter)
    assert out == HITS
    assert "rerank failed" in reporter.warnings[0]
    assert KEY not in reporter.warnings[0]


def test_local_weighting_applies_priority_recency_vitality_and_the_limit() -> None:
    factual = local_weighting(HITS, NOW, limit=2)
    assert [r.id for r in factual] == ["b", "a"]  # 4×2=8 beats 5×1=5 and 1×4=4
    temporal = local_weighting(HITS, NOW, intent="temporal", limit=3)
    assert [r.id for r in temporal] == ["a", "b", "c"]
    assert temporal[2].score == pytest.approx(1.0 * 0.25)
