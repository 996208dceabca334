"""Run results, the `--json` envelope, and the rotating log.

The core builds a `CommandResult`; the CLI renders it. The log masks every known secret
(memfuse.report.SecretMasker), like everything else that leaves the process.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memfuse.errors import ExitCode
from memfuse.report import SecretMasker
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
        from memfuse.confine import open_private

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
