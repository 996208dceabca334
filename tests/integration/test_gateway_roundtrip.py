"""The gateway through the real mcporter binary against the reference server."""

from __future__ import annotations

import time

import pytest

from memfuse.gateway import CallFailed, CallTimeout, Guard, ServerError, ToolMissing
from memfuse.output import Reporter
from tests.conftest import StoreServer

pytestmark = pytest.mark.integration

HOSTILE = [
    "@/etc/passwd", "none", "true", "null", '{"a":1}', "[1,2]", "42", "3.10",
    "x" * 10_000, "quote \" apostrophe ' backslash \\ dollar $HOME", "line one\nline two",
    "emoji 🧠✨ and 中文 and 日本語",
]  # fmt: skip


def test_hostile_strings_round_trip_byte_exact(store: StoreServer) -> None:
    # The write gate would reject `42` or `none` as too short; this test is about the transport,
    # so the reference server's gate is switched off (AGENT_MEMORY_GATE=off).
    store.env["AGENT_MEMORY_GATE"] = "off"
    store.write_config()
    texts = [*HOSTILE, "  padded  "]
    for n, text in enumerate(texts):
        uri = f"event://test/{n:02d}"
        answer = store.call("remember", {"content": text, "type": "event", "uri": uri})
        assert answer["action"] == "added", (text[:40], answer)
    # Back through mcporter in one listing: its output, not only its input, must be exact.
    listing = store.call("recall_path", {"uri": "event://test/"})["memories"]
    stored = {m["uri"]: m["content"] for m in listing}
    for n, text in enumerate(texts):
        assert stored[f"event://test/{n:02d}"] == text.strip(), text[:40]


def test_same_content_is_skipped_and_same_uri_is_updated(store: StoreServer) -> None:
    first = store.call(
        "remember",
        {
            "content": "Migrated the wiki to the new host",
            "type": "event",
            "uri": "event://journal/2026-02-21#2200-1",
        },
    )
    dup = store.call("remember", {"content": "Migrated the wiki to the new host", "type": "event"})
    upd = store.call(
        "remember",
        {
            "content": "Migrated the wiki to the new host, with Bob",
            "type": "event",
            "uri": "event://journal/2026-02-21#2200-1",
        },
    )
    short = store.call("remember", {"content": "ok!", "type": "event"})
    assert (dup["action"], dup["memoryId"]) == ("skipped", first["memoryId"])
    assert upd["action"] == "updated"
    assert short["action"] == "skipped" and "Gate rejected" in short["reason"]


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


def test_server_that_never_answers_is_killed_within_the_timeout(store: StoreServer) -> None:
    store.set_mode("hang")
    started = time.monotonic()
    with pytest.raises((CallTimeout, CallFailed)):
        store.gateway(timeout=2).call("status", {})
    assert time.monotonic() - started < 20  # it did not hang (a 2 s timeout, generous for CI)


def test_missing_mcporter_crashing_server_and_error_answers_become_warnings(
    store: StoreServer,
) -> None:
    from memfuse.gateway import McporterGateway

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
    from memfuse.gateway import McporterGateway

    with pytest.raises(ToolMissing):
        McporterGateway("/nonexistent/mcporter", "agent-memory").call("status", {})
    with pytest.raises(ServerError):
        store.gateway().call("forget", {"id": "no-such-id"})
    with pytest.raises(CallFailed, match="Input validation error"):
        store.gateway().call("remember", {"content": "Valid content here", "type": "mood"})
