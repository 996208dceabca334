"""The best-effort guard: every store call goes through it, and no store failure stops a run.

A failed call becomes one counted warning (stderr and the log) and a `None` result; the caller
carries on with what it has. Commands read `reporter.guard_failures` for `degraded`/`--strict`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from memfuse.report import Reporter
from memfuse.store.gateway.base import (
    Answer,
    BadOutput,
    CallFailed,
    CallTimeout,
    Gateway,
    GatewayError,
    ServerError,
    ToolMissing,
)

ToolCall = tuple[str, Mapping[str, Any]]
Tried = tuple[dict[str, Any] | None, str | None]  # the answer, or None and why it failed


# After this many failures in a row that say the store is unreachable (not a per-call error),
# the rest of the run's calls fail at once instead of each waiting out its own timeout (calls
# within one run: not the settings' alert_failed_runs, which counts runs).
BREAKER_THRESHOLD = 3
UNREACHABLE = (ToolMissing, CallTimeout, CallFailed)


class Guard:
    """Runs calls on a gateway, turning each failure into a warning."""

    def __init__(
        self,
        gateway: Gateway,
        reporter: Reporter,
        jobs: int = 1,
        breaker_threshold: int = BREAKER_THRESHOLD,
    ) -> None:
        self.gateway = gateway
        self.reporter = reporter
        self.jobs = max(1, jobs)
        self.calls = 0
        self.skipped = 0
        self.reached = 0  # calls the store answered (a server-side error included)
        self.busy = 0.0  # seconds of the run's wall time with a call in flight
        self._in_flight = 0
        self._since = 0.0
        self._lock = threading.Lock()
        # The run's first call goes alone: a server starting on a fresh database sets up its
        # schema, and several doing that at once can fail one of them.
        self._first = threading.Lock()
        self._opened = False
        self._threshold = breaker_threshold
        self._failures_in_a_row = 0
        self._cause = ""

    @property
    def tripped(self) -> bool:
        return self._failures_in_a_row >= self._threshold

    def _note(self, failure: GatewayError | None = None) -> None:
        """Feed the breaker: a success resets it; an unreachable store counts towards it, and
        a missing program trips it at once (no retry can find it)."""
        with self._lock:
            if failure is None:
                self._failures_in_a_row = 0
                self.reached += 1
            elif isinstance(failure, ToolMissing):
                self._failures_in_a_row = max(self._failures_in_a_row + 1, self._threshold)
                self._cause = str(failure)
            elif isinstance(failure, UNREACHABLE):
                self._failures_in_a_row += 1
                self._cause = f"{self._failures_in_a_row} failures in a row, the last: {failure}"

    def answer(
        self, tool: str, arguments: Mapping[str, Any], tolerate: tuple[str, ...] = ()
    ) -> tuple[Answer | None, str | None]:
        """Any answer, JSON or text; or None and why, the warning given (a server error that
        holds one of `tolerate` is an expected answer)."""
        if self.tripped:
            with self._lock:
                self.skipped += 1
            why = f"skipped the remaining store calls (retried by the next run): {self._cause}"
            self.reporter.warn(why, guard=True)
            return None, why
        started = time.monotonic()
        with self._lock:
            self.calls += 1
            if self._in_flight == 0:
                self._since = started
            self._in_flight += 1
        try:
            answer = self._first_alone(tool, arguments)
        except GatewayError as exc:
            self._debug(tool, started, type(exc).__name__)
            return self._failed(tool, exc, tolerate), str(exc)
        finally:
            with self._lock:
                self._in_flight -= 1
                if self._in_flight == 0:
                    self.busy += time.monotonic() - self._since
        self._debug(tool, started, "ok")
        self._note()
        return answer, None

    def _first_alone(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        if not self._opened:
            with self._first:
                if not self._opened:
                    try:
                        return self.gateway.call(tool, arguments)
                    finally:
                        self._opened = True
        return self.gateway.call(tool, arguments)

    def _debug(self, tool: str, started: float, outcome: str) -> None:
        # Never the arguments: journal text is private and can be large.
        ms = (time.monotonic() - started) * 1000
        self.reporter.logger.debug("%s via %s: %s in %.0f ms", tool, self.gateway.name, outcome, ms)

    def _failed(self, tool: str, exc: GatewayError, tolerate: tuple[str, ...]) -> Answer | None:
        if isinstance(exc, ServerError):
            self._note()  # the store answered: it is reachable
            if any(fragment in str(exc) for fragment in tolerate):
                return Answer(tool, str(exc), {"error": str(exc)})
        else:
            self._note(exc)
        self.reporter.warn(str(exc), guard=True)
        return None

    def call(
        self, tool: str, arguments: Mapping[str, Any], tolerate: tuple[str, ...] = ()
    ) -> dict[str, Any] | None:
        """A JSON object answer; None (and a warning) for any failure or a non-JSON answer."""
        return self.attempt(tool, arguments, tolerate)[0]

    def attempt(
        self, tool: str, arguments: Mapping[str, Any], tolerate: tuple[str, ...] = ()
    ) -> Tried:
        """A JSON object answer, or None and why the call failed (the warning given)."""
        answer, why = self.answer(tool, arguments, tolerate)
        if answer is None:
            return None, why or "no answer"
        try:
            return answer.require_object(), None
        except BadOutput as exc:
            self.reporter.warn(str(exc), guard=True)
            return None, str(exc)

    def as_completed(self, calls: Sequence[ToolCall]) -> Iterator[tuple[int, Tried]]:
        """Yield (index, (result, why it failed)) as each call finishes."""
        if self.jobs == 1 or len(calls) < 2:
            for index, call in enumerate(calls):
                yield index, self.attempt(*call)
            return
        with ThreadPoolExecutor(max_workers=min(self.jobs, len(calls))) as pool:
            futures = {pool.submit(self.attempt, *call): i for i, call in enumerate(calls)}
            try:
                for future in as_completed(futures):
                    yield futures[future], future.result()
            finally:
                for future in futures:
                    future.cancel()
