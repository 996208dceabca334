"""One contract, two transports: the real mcporter and a real MCP session must agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from memfuse.config import load_settings
from memfuse.report import Reporter
from memfuse.store.connect import connect, find_server
from memfuse.store.gateway import (
    CallFailed,
    CallTimeout,
    Gateway,
    Guard,
    ServerError,
    ToolMissing,
)
from tests.conftest import UNREACHED, StoreServer

pytestmark = pytest.mark.integration
TRANSPORTS = ["mcporter", "session", "auto"]  # auto: the default, which picks session here


def gateway(store: StoreServer, transport: str, timeout: float = UNREACHED) -> Gateway:
    settings = load_settings(
        {"mcporter": store.mcporter, "mcporter_config": str(store.config), "transport": transport,
         "timeout": timeout, "workspace": str(store.root / "workspace")},
        {"HOME": str(store.root)},
    )  # fmt: skip
    return connect(settings, find_server(settings))[0]


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_remember_semantics_are_identical(store: StoreServer, transport: str) -> None:
    gw = gateway(store, transport)
    try:
        uri = "event://journal/2026-02-21#2200-1"
        first = gw.call(
            "remember",
            {"content": "Migrated the wiki to the new host", "type": "event", "uri": uri},
        ).require_object()
        dup = gw.call(
            "remember", {"content": "Migrated the wiki to the new host", "type": "event"}
        ).require_object()
        upd = gw.call(
            "remember", {"content": "Migrated the wiki, with Bob", "type": "event", "uri": uri}
        ).require_object()
        gate = gw.call("remember", {"content": "ok", "type": "event"}).require_object()
        assert [first["action"], dup["action"], upd["action"], gate["action"]] == [
            "added",
            "skipped",
            "updated",
            "skipped",
        ]
        assert dup["memoryId"] == first["memoryId"] == upd["memoryId"]
        assert "memoryId" not in gate
        assert (
            gw.call("recall_path", {"uri": uri}).require_object()["memory"]["content"]
            == "Migrated the wiki, with Bob"
        )
        assert sorted(gw.list_tools()) == [
            "forget",
            "recall",
            "recall_path",
            "reflect",
            "remember",
            "status",
        ]
    finally:
        gw.close()


HOSTILE = [
    "@/etc/passwd", "none", "true", "null", '{"a":1}', "[1,2]", "42", "3.10",
    "x" * 10_000, "quote \" apostrophe ' backslash \\ dollar $HOME", "line one\nline two",
    "emoji 🧠✨ and 中文 and 日本語", '多语言\n✨ $HOME \\ "',
]  # fmt: skip


def test_hostile_text_is_byte_exact(store: StoreServer, transport: str) -> None:
    # The write gate would reject `42` or `none` as too short; this test is about the transport,
    # so the reference server's gate is switched off.
    store.set_mode("ok", AGENT_MEMORY_GATE="off")
    gw = gateway(store, transport)
    try:
        texts = [*HOSTILE, "  padded  "]
        for n, text in enumerate(texts):
            answer = gw.call(
                "remember", {"content": text, "type": "event", "uri": f"event://t/{n:02d}"}
            ).require_object()
            assert answer["action"] == "added", (text[:40], answer)
        # Back in one listing: the transport's output, not only its input, must be exact.
        listing = gw.call("recall_path", {"uri": "event://t/"}).require_object()["memories"]
        stored = {m["uri"]: m["content"] for m in listing}
        for n, text in enumerate(texts):
            assert stored[f"event://t/{n:02d}"] == text.strip(), text[:40]
    finally:
        gw.close()


@pytest.mark.parametrize(
    ("mode", "error"),
    [("error", ServerError), ("crash-start", (CallFailed, ToolMissing)), ("hang", CallTimeout)],
)
def test_failures_map_to_the_same_typed_errors(
    store: StoreServer, transport: str, mode: str, error: Any
) -> None:
    store.set_mode(mode)
    # Only the hang's timeout is the point (the server never answers: it always fires); the
    # others answer or die at once, their timeout out of play however slow the machine.
    gw = gateway(store, transport, timeout=2 if mode == "hang" else UNREACHED)
    try:
        with pytest.raises(error):
            gw.call("status", {})
    finally:
        gw.close()


def test_prose_answers_are_kept_raw(store: StoreServer, transport: str) -> None:
    store.set_mode("prose")
    gw = gateway(store, transport)
    try:
        answer = gw.call("reflect", {"phase": "all"})
    finally:
        gw.close()
    assert answer.value is None
    assert answer.text.startswith("Sleep cycle complete.")


TOPICS = [
    "Reviewed the Q3 roadmap with Alice", "Fixed the importer's timezone bug",
    "Planned the Lisbon offsite with Carol", "Wrote the Tuesday outage postmortem",
    "Upgraded Postgres on staging to 16.4", "Paired with Dana on flaky checkout tests",
    "Interviewed two backend candidates", "Migrated the wiki to the new host",
    "Demoed the billing dashboard to finance", "Cleaned up 40 stale feature flags",
    "Booked train tickets to Hamburg", "Read chapter five of DDIA",
]  # fmt: skip
JOURNAL = "## 09:00\n" + "".join(f"- {topic}\n" for topic in TOPICS)


def sync(ws: Path, store: StoreServer, transport: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["sync", "-w", str(ws), "--date", "2026-02-21",
                                      "--json", *store.cli_args(transport)])  # fmt: skip
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_sync_gives_the_same_results_over_both(
    store: StoreServer, transport: str, workspace: Path
) -> None:
    # Four bullets show it: over mcporter each is a node process (~0.5 s of CPU).
    (workspace / "memory" / "2026-02-21.md").write_text(
        "## 09:00\n" + "".join(f"- {topic}\n" for topic in TOPICS[:4])
    )
    first = sync(workspace, store, transport)
    second = sync(workspace, store, transport)
    assert first["data"]["counts"]["added"] == 4
    assert second["data"]["counts"]["unchanged"] == 4
    assert second["data"]["calls"] == 1  # the status probe
    assert store.direct("status")["total"] == 4


def test_a_session_that_dies_is_reopened_once_then_fails_into_the_guard(
    store: StoreServer, workspace: Path
) -> None:
    (workspace / "memory" / "2026-02-21.md").write_text(JOURNAL)
    store.set_mode("crash-after", FAULT_AFTER="5")  # the status probe, then 4 remembers
    first = sync(workspace, store, "session")
    assert first["status"] == "degraded"
    assert first["data"]["counts"]["added"] == 4
    assert first["data"]["counts"]["failed"] == 8
    store.set_mode("ok-counted")
    second = sync(workspace, store, "session")
    assert second["data"]["counts"]["added"] == 8
    assert store.direct("status")["total"] == 12


def test_the_guard_counts_session_failures_like_mcporter_ones(store: StoreServer) -> None:
    store.set_mode("error")
    reporter = Reporter()
    gw = gateway(store, "session")
    try:
        assert Guard(gw, reporter).call("status", {}) is None
    finally:
        gw.close()
    assert reporter.guard_failures == 1
    assert "injected failure" in reporter.warnings[0]
