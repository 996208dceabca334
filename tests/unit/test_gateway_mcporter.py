from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memfuse.report import Reporter
from memfuse.store.gateway import (
    BadOutput,
    CallFailed,
    CallTimeout,
    Guard,
    McporterGateway,
    ServerError,
    ToolMissing,
)
from memfuse.store.gateway.mcporter import (
    OutputTooLarge,
    RunOutcome,
    build_argv,
    failure_detail,
)


@dataclass
class FakeRunner:
    """Records each call; answers with a canned outcome or raises a canned exception."""

    outcome: RunOutcome | BaseException = field(default_factory=lambda: RunOutcome(0, b"{}", b""))
    calls: list[tuple[list[str], bytes, float]] = field(default_factory=list)

    def __call__(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes,
        timeout: float,
        env: Mapping[str, str] | None,
        cwd: str | None = None,
    ) -> RunOutcome:
        self.calls.append((list(argv), stdin, timeout))
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


def test_argv_passes_arguments_on_stdin_never_as_key_value() -> None:
    argv = build_argv(
        "mcporter", "agent-memory", "remember", config=Path("/c.json"), timeout_ms=5000
    )
    assert argv == [
        "mcporter", "--config", "/c.json", "call", "agent-memory.remember",
        "--args", "-", "--output", "text", "--timeout", "5000",
    ]  # fmt: skip
    assert not any("=" in part for part in argv)


def test_argv_splits_a_command_with_arguments() -> None:
    argv = build_argv("node /opt/mcporter/cli.js", "mem", "status")
    assert argv[:2] == ["node", "/opt/mcporter/cli.js"]
    assert "--config" not in argv


@pytest.mark.parametrize(
    "text", ["@/etc/passwd", "none", "true", '{"a":1}', "  padded  ", "多语言 ✨"]
)
def test_hostile_text_reaches_stdin_unchanged(text: str) -> None:
    runner = FakeRunner(RunOutcome(0, b'{"action":"added","memoryId":"1"}', b""))
    McporterGateway("mcporter", "agent-memory", runner=runner).call("remember", {"content": text})
    _argv, stdin, _timeout = runner.calls[0]
    assert json.loads(stdin.decode("utf-8")) == {"content": text}
    assert text not in " ".join(runner.calls[0][0])


def test_wall_clock_limit_is_the_call_timeout_plus_grace() -> None:
    runner = FakeRunner()
    McporterGateway("mcporter", "s", timeout=7, runner=runner).call("status", {})
    argv, _stdin, timeout = runner.calls[0]
    assert argv[-2:] == ["--timeout", "7000"]
    assert 7 < timeout <= 9


@pytest.mark.parametrize(
    ("outcome", "error", "fragment"),
    [
        (FileNotFoundError(), ToolMissing, "mcporter not found"),
        (subprocess.TimeoutExpired("mcporter", 3), CallTimeout, "did not answer within"),
        (RunOutcome(1, b"server noise\n", b"MCP error -32602: Input validation error\n"), CallFailed,
         "Input validation error"),
        (RunOutcome(0, b'{"error": "Memory not found"}', b""), ServerError, "Memory not found"),
    ],
)  # fmt: skip
def test_failures_are_typed(outcome: object, error: type[Exception], fragment: str) -> None:
    runner = FakeRunner(outcome)  # type: ignore[arg-type]
    with pytest.raises(error, match=fragment):
        McporterGateway("mcporter", "agent-memory", runner=runner).call("forget", {"id": "x"})


@pytest.mark.parametrize(
    ("outcome", "error", "fragment"),
    [
        (FileNotFoundError(), ToolMissing, "mcporter not found"),
        (PermissionError(), ToolMissing, "permission denied"),
        (subprocess.TimeoutExpired("mcporter", 3), CallTimeout, "listing agent-memory's tools"),
        (OutputTooLarge("more than 16 MiB"), CallFailed, "more than 16 MiB"),
    ],
)  # fmt: skip
def test_listing_tools_fails_as_a_call_does(
    outcome: BaseException, error: type[Exception], fragment: str
) -> None:
    """Every way mcporter can fail is one typed gateway error when listing tools too (a refused
    program and an oversized answer escaped as other exceptions before issue 48)."""
    with pytest.raises(error, match=fragment):
        McporterGateway("mcporter", "agent-memory", runner=FakeRunner(outcome)).list_tools()


def test_text_answers_are_kept_raw_for_callers_that_accept_prose() -> None:
    runner = FakeRunner(RunOutcome(0, b"Sleep cycle complete.\n", b""))
    answer = McporterGateway("m", "s", runner=runner).call("reflect", {"phase": "all"})
    assert answer.value is None
    assert answer.text.strip() == "Sleep cycle complete."
    with pytest.raises(BadOutput):
        answer.require_object()


def test_failure_detail_prefers_the_error_line_over_server_noise() -> None:
    stdout = "Traceback (most recent call last):\n  spam\nfine line\n"
    stderr = "[mcporter] Failed to connect to agent-memory: offline\n"
    assert failure_detail(stdout, stderr).startswith("[mcporter] Failed to connect")


def test_guard_turns_each_failure_into_one_counted_warning() -> None:
    echoed: list[str] = []
    reporter = Reporter(echo=echoed.append)
    guard = Guard(McporterGateway("m", "s", runner=FakeRunner(FileNotFoundError())), reporter)
    assert guard.call("status", {}) is None
    assert guard.call("status", {}) is None
    assert reporter.guard_failures == 2
    assert guard.calls == 1  # a missing program is not retried call after call
    assert echoed[0].startswith("warning: mcporter not found")
    # The breaker's warning names the real cause, not "failed 3 times".
    assert "skipped the remaining store calls" in echoed[1] and "mcporter not found" in echoed[1]
    assert "times in a row" not in echoed[1]


def test_guard_flags_non_json_answers_where_json_is_needed() -> None:
    reporter = Reporter()
    runner = FakeRunner(RunOutcome(0, b"<html>502</html>", b""))
    assert Guard(McporterGateway("m", "s", runner=runner), reporter).call("status", {}) is None
    assert reporter.guard_failures == 1
    assert "not JSON" in reporter.warnings[0]


def test_concurrent_calls_keep_their_index() -> None:
    class Echo:
        name = "echo"
        costly_listing = False

        def version(self) -> None:
            pass

        def call(self, tool: str, arguments: Mapping[str, object]) -> object:
            from memfuse.store.gateway import Answer

            return Answer(tool, "", dict(arguments))

        def list_tools(self) -> list[str]:
            return []

        def close(self) -> None:
            pass

    guard = Guard(Echo(), Reporter(), jobs=4)  # type: ignore[arg-type]
    results = dict(guard.as_completed([("t", {"n": n}) for n in range(50)]))
    assert [results[i][0]["n"] for i in range(50) if results[i][0]] == list(range(50))


def test_breaker_stops_calling_a_dead_store_after_three_failures_in_a_row() -> None:
    runner = FakeRunner(subprocess.TimeoutExpired("mcporter", 30))
    reporter = Reporter()
    guard = Guard(McporterGateway("m", "s", runner=runner), reporter)
    results = [guard.call("remember", {"content": str(n)}) for n in range(100)]
    assert results == [None] * 100
    assert len(runner.calls) == 3
    assert guard.skipped == 97
    assert reporter.guard_failures == 100
    assert len(reporter.warnings) == 2  # the timeout once, the skip notice once


def test_per_call_server_errors_do_not_trip_the_breaker() -> None:
    runner = FakeRunner(RunOutcome(0, b'{"error": "Memory not found"}', b""))
    guard = Guard(McporterGateway("m", "s", runner=runner), Reporter())
    for _ in range(5):
        guard.call("forget", {"id": "x"})
    assert len(runner.calls) == 5
