"""Issue 29: every answer from outside is bounded in time, size and depth, through the real
transports (mcporter, the MCP session) and a real HTTP reranker on loopback. A violation is
that call's failure: one typed error, never a crash, a hang or the machine's memory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from memfuse.config import load_settings
from memfuse.recall.reranker import RerankClient, RerankError
from memfuse.settings import RerankSettings
from memfuse.store.connect import connect, find_server
from memfuse.store.gateway import CallFailed, Gateway
from memfuse.store.gateway.mcporter import OutputTooLarge, run_in_process_group
from tests.conftest import UNREACHED, StoreServer
from tests.rerank_server import base_url, serve

pytestmark = pytest.mark.integration


def gateway(store: StoreServer, transport: str) -> Gateway:
    settings = load_settings(
        {"mcporter": store.mcporter, "mcporter_config": str(store.config), "transport": transport,
         "timeout": 60, "workspace": str(store.root / "workspace")},
        {"HOME": str(store.root)},
    )  # fmt: skip
    return connect(settings, find_server(settings))[0]


@pytest.mark.parametrize("transport", ["session", "mcporter"])
def test_a_store_answer_of_20_mib_on_one_line_is_one_failed_call(
    store: StoreServer, transport: str
) -> None:
    store.set_mode("huge")
    gw = gateway(store, transport)
    try:
        # mcporter gives up on such a line itself; the session transport stops at 16 MiB.
        with pytest.raises(CallFailed, match="16 MiB" if transport == "session" else None):
            gw.call("status", {})
    finally:
        gw.close()


@pytest.mark.parametrize("transport", ["session", "mcporter"])
def test_a_store_answer_nested_200_000_deep_is_text_not_a_crash(
    store: StoreServer, transport: str
) -> None:
    store.set_mode("deep")
    gw = gateway(store, transport)
    try:
        answer = gw.call("status", {})
    finally:
        gw.close()
    assert answer.value is None  # kept as text, never parsed: the guard makes it a failed call
    assert answer.text.startswith("[[[")


def test_the_process_runner_stops_reading_at_its_limit(tmp_path: Path) -> None:
    script = "import sys; sys.stdout.write('x' * (64 << 20)); sys.stdout.flush()"
    with pytest.raises(OutputTooLarge):
        run_in_process_group(
            [sys.executable, "-c", script], stdin=b"", timeout=UNREACHED, env=None, limit=1 << 20
        )


def reranker(server: Any, timeout: float = 1.0) -> RerankClient:
    settings = RerankSettings(
        provider="jina", api_key="test-key-123456", base_url=base_url(server), timeout=timeout
    )
    return RerankClient(settings)


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [("slowloris", "did not answer within 1s"), ("huge", "more than 4 MiB"), ("deep", "nested")],
)
def test_a_hostile_reranker_is_one_error_within_its_deadline(mode: str, fragment: str) -> None:
    with serve(mode) as server:
        client = reranker(server)
        try:  # the trickle and the flood never end: the deadline's error, not a stretched read
            with pytest.raises(RerankError, match=fragment):
                client.rerank("billing", ["Met Bob about billing", "Lunch at noon"])
        finally:
            client.close()
