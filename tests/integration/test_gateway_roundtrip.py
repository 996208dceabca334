"""The gateway through the real mcporter binary against the reference server: answer shapes,
and failures as warnings and typed errors. What both transports must do alike (remember
semantics, byte-exact hostile text, a hang) is in test_transport_contract.py."""

from __future__ import annotations

import pytest

from memfuse.report import Reporter
from memfuse.store.gateway import CallFailed, Guard, ServerError, ToolMissing
from tests.conftest import StoreServer

pytestmark = pytest.mark.integration


def test_reflect_and_prefix_shapes(store: StoreServer) -> None:
    store.call(
        "remember",
        {
            "content": "Migrated the wiki to the new host",
            "type": "event",
            "uri": "event://journal/2026-02-21#2200-1",
        },
    )
    reflect = store.call("reflect", {"phase": "all"})
    assert set(reflect) == {"decay", "tidy", "govern"}
    listing = store.call("recall_path", {"uri": "event://journal/"})
    assert set(listing["memories"][0]) == {"uri", "content", "type", "priority"}


def test_missing_mcporter_crashing_server_and_error_answers_become_warnings(
    store: StoreServer,
) -> None:
    from memfuse.store.gateway import McporterGateway

    reporter = Reporter()
    missing = McporterGateway("/nonexistent/mcporter", "agent-memory", config=store.config)
    assert Guard(missing, reporter).call("status", {}) is None
    store.set_mode("crash-start")
    assert Guard(store.gateway(), reporter).call("status", {}) is None
    store.set_mode("error")
    assert Guard(store.gateway(), reporter).call("status", {}) is None
    assert reporter.guard_failures == 3
    assert "mcporter not found" in reporter.warnings[0]
    assert "agent-memory.status failed" in reporter.warnings[1]
    assert "injected failure" in reporter.warnings[2]


def test_typed_errors_for_each_failure(store: StoreServer) -> None:
    from memfuse.store.gateway import McporterGateway

    with pytest.raises(ToolMissing):
        McporterGateway("/nonexistent/mcporter", "agent-memory").call("status", {})
    with pytest.raises(ServerError):
        store.gateway().call("forget", {"id": "no-such-id"})
    with pytest.raises(CallFailed, match="Input validation error"):
        store.gateway().call("remember", {"content": "Valid content here", "type": "mood"})
