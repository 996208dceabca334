"""A run's warnings, and the secrets they must never show.

Warnings are collected by a `Reporter` that also echoes them to stderr as they happen (a long
backfill should not hide trouble until the end) and writes them to the log, with every known
secret masked. Every layer that can fail best-effort (the store's guard, the reranker) reports
through one.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


class SecretMasker:
    """Replaces known secret values with a fixed mask in any text that leaves the process."""

    MASK = "****"

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, self.MASK)
        return text


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

    def begin(self, mask: SecretMasker, logger: logging.Logger) -> None:
        """The run's secrets and log, once the settings that name them are known (a run that
        fails before then reports with neither)."""
        self.mask = mask
        self.logger = logger

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
