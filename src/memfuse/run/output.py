"""Run results, the `--json` envelope, and the rotating log (masking every known secret)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memfuse.confine import UnsafePath
from memfuse.errors import ExitCode
from memfuse.report import SecretMasker
from memfuse.run.results import FailureData
from memfuse.state.folder import StateFolder

LOG_BYTES = 1_000_000
LOG_BACKUPS = 3


# The envelope's shape: raised when a key changes meaning or goes away (added keys do not).
ENVELOPE_SCHEMA = 2


@dataclass(frozen=True)
class CommandResult:
    """What a command produced and how it went: `data` for `--json` (typed per command in
    memfuse.run.results), `human` lines rendered from it (memfuse.run.render), or a `payload` — the
    text that is the product itself (RECENT.md under `surface --stdout`, the schedule, recall's
    answer), printed verbatim in place of the lines and even under `-q`."""

    command: str
    data: Mapping[str, Any]
    human: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    guard_failures: int = 0
    exit_code: ExitCode = ExitCode.OK
    payload: str | None = None

    @property
    def status(self) -> str:
        """What the exit code says, in a word (docs/operations.md lists them)."""
        if self.exit_code == ExitCode.ESCALATED:
            return "escalated"
        if self.exit_code == ExitCode.STRICT:
            return "degraded"
        if self.exit_code == ExitCode.UNCHECKED:
            return "unchecked"
        if self.exit_code != ExitCode.OK:
            return "failed"
        return "degraded" if self.guard_failures else "ok"

    def envelope(self, duration_ms: int, store_ms: int = 0) -> dict[str, Any]:
        return {
            "schema": ENVELOPE_SCHEMA,
            "command": self.command,
            "status": self.status,
            "exit_code": int(self.exit_code),
            "data": dict(self.data),
            "warnings": list(self.warnings),
            "duration_ms": duration_ms,
            "store_ms": store_ms,
        }


def failure(command: str, message: str, exit_code: ExitCode) -> CommandResult:
    """The result of a run that could not do its job."""
    data: FailureData = {"error": message}
    return CommandResult(command=command, data=data, exit_code=exit_code)


def to_json(envelope: Mapping[str, Any]) -> str:
    return json.dumps(envelope, ensure_ascii=False, indent=2, default=str)


class _MaskingFilter(logging.Filter):
    def __init__(self, mask: SecretMasker) -> None:
        super().__init__()
        self._mask = mask

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._mask(record.getMessage())
        record.args = None
        return True


class _StateLog(logging.Handler):
    """The rotating log (1 MB, 3 kept), written 0600 relative to the open state folder, never
    through a link; one planted in its place is moved aside once."""

    def __init__(self, state: StateFolder) -> None:
        super().__init__()
        self.state = state
        self._fd = self._open()

    def _open(self) -> int:
        try:
            return self.state.open(self.state.LOG, os.O_WRONLY | os.O_APPEND)
        except UnsafePath as exc:
            self.state.quarantine(self.state.LOG, str(exc))
            return self.state.open(self.state.LOG, os.O_WRONLY | os.O_APPEND)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = (self.format(record) + "\n").encode("utf-8", errors="replace")
            if os.fstat(self._fd).st_size + len(line) > LOG_BYTES:
                self._rotate()
            os.write(self._fd, line)
        except (OSError, UnsafePath, ValueError):
            pass  # a full disk or a lost log must not stop the run; the run history remains

    def _rotate(self) -> None:
        os.close(self._fd)
        name = self.state.LOG
        for n in range(LOG_BACKUPS - 1, 0, -1):
            with contextlib.suppress(OSError):
                self.state.rename(f"{name}.{n}", f"{name}.{n + 1}")
        with contextlib.suppress(OSError):
            self.state.rename(name, f"{name}.1")
        self._fd = self._open()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)
        super().close()


def setup_log(state: StateFolder, mask: SecretMasker, verbose: bool) -> logging.Logger:
    """A per-run logger appending to the state folder's log (none when it cannot be written)."""
    logger = logging.getLogger("memfuse")
    for stale in list(logger.handlers):
        logger.removeHandler(stale)
        stale.close()
    for old in list(logger.filters):
        logger.removeFilter(old)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False
    logger.addFilter(_MaskingFilter(mask))
    handler: logging.Handler
    try:
        handler = _StateLog(state)
    except (OSError, UnsafePath):
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(message)s"))
    logger.addHandler(handler)
    libraries(handler, mask)
    return logger


def libraries(handler: logging.Handler | None = None, mask: SecretMasker | None = None) -> None:
    """What the libraries memfuse uses log (the MCP SDK warns when a cancel cannot be sent)
    goes to memfuse's own log, never to stderr: under cron, stderr is mail to a person."""
    for name in ("mcp", "httpx", "httpcore"):
        library = logging.getLogger(name)
        for stale in list(library.handlers):
            library.removeHandler(stale)
        for old in list(library.filters):
            library.removeFilter(old)
        library.propagate = False
        library.setLevel(logging.WARNING)
        library.addHandler(handler or logging.NullHandler())
        if mask is not None:
            library.addFilter(_MaskingFilter(mask))
