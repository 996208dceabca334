"""Run results, the `--json` envelope, warnings, and the rotating log.

The core builds a `CommandResult`; the CLI renders it. Warnings are collected by a `Reporter`
that also echoes them to stderr as they happen (a long backfill should not hide trouble until
the end) and writes them to the log, with every known secret masked.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memfuse.errors import ExitCode
from memfuse.run.results import FailureData

LOG_BYTES = 1_000_000
LOG_BACKUPS = 3


@dataclass(frozen=True)
class CommandResult:
    """What a command produced and how it went: `data` for `--json` (typed per command in
    memfuse.run.results), `human` lines rendered from it (memfuse.run.render), or a `payload` — the
    text that is the product itself (RECENT.md under `surface --stdout`, the crontab, recall's
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
        if self.exit_code not in (ExitCode.OK, ExitCode.STRICT, ExitCode.ESCALATED):
            return "failed"
        return "degraded" if self.guard_failures else "ok"

    def envelope(self, duration_ms: int) -> dict[str, Any]:
        return {
            "command": self.command,
            "status": self.status,
            "exit_code": int(self.exit_code),
            "data": dict(self.data),
            "warnings": list(self.warnings),
            "duration_ms": duration_ms,
        }


def failure(command: str, message: str, exit_code: ExitCode) -> CommandResult:
    """The result of a run that could not do its job."""
    data: FailureData = {"error": message}
    return CommandResult(command=command, data=data, exit_code=exit_code)


def to_json(envelope: Mapping[str, Any]) -> str:
    return json.dumps(envelope, ensure_ascii=False, indent=2, default=str)


class SecretMasker:
    """Replaces known secret values with a fixed mask in any text that leaves the process."""

    MASK = "****"

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, self.MASK)
        return text


class _MaskingFilter(logging.Filter):
    def __init__(self, mask: SecretMasker) -> None:
        super().__init__()
        self._mask = mask

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._mask(record.getMessage())
        record.args = None
        return True


class _PrivateLog(logging.handlers.RotatingFileHandler):
    """The rotating log, opened 0600 and never through a link planted in its place."""

    def _open(self) -> Any:
        from memfuse.state.files import open_private

        fd = open_private(Path(self.baseFilename), os.O_WRONLY | os.O_APPEND)
        return open(fd, self.mode, encoding=self.encoding, errors=self.errors)


def setup_log(path: Path, mask: SecretMasker, verbose: bool) -> logging.Logger:
    """A per-run logger appending to the state folder's log (rotated at 1 MB, 3 kept).

    When the state folder cannot be written, the run still goes on without a log file.
    """
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
        handler = _PrivateLog(path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8")
    except OSError:  # a link planted there is UnsafePath instead: the run stops, saying so
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return logger


@dataclass
class Reporter:
    """Collects a run's warnings. Thread-safe: concurrent calls warn from worker threads."""

    echo: Callable[[str], None] = lambda _message: None
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("memfuse"))
    mask: SecretMasker = field(default_factory=SecretMasker)
    warnings: list[str] = field(default_factory=list)
    guard_failures: int = 0
    _seen: Counter[str] = field(default_factory=Counter, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def warn(self, message: str, *, guard: bool = False) -> None:
        """Record a warning. A repeat of the same message is counted and logged, not echoed
        again: a dead store should cost one line of cron mail, not a thousand."""
        message = self.mask(message)
        with self._lock:
            self._seen[message] += 1
            first = self._seen[message] == 1
            if first:
                self.warnings.append(message)
            if guard:
                self.guard_failures += 1
        self.logger.warning(message)
        if first:
            self.echo(f"warning: {message}")

    def info(self, message: str) -> None:
        self.logger.info(self.mask(message))
