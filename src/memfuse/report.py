"""A run's warnings, and the secrets they must never show.

A `Reporter` echoes warnings to stderr as they happen (a long backfill should not hide trouble
until the end) and writes them to the log, with every known secret masked.
"""

from __future__ import annotations

import logging
import re
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


# The words of a line that names why another program failed, most telling first; a line that
# only says where (a config path, a bind mode, a stack frame) names no cause.
_CAUSES = (
    re.compile(
        r"not reachable|requires credentials|unauthori[sz]ed|forbidden|permission denied"
        r"|token mismatch|cannot find module|requires node|node:sqlite|ECONNREFUSED|EACCES"
        r"|ENOENT|timed out|no such file",
        re.IGNORECASE,
    ),
    re.compile(r"error|failed|cannot|can't|invalid|not found|missing|denied|refused", re.I),
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_SECRETISH = re.compile(
    r"(?i)(\b(?:token|password|passwd|secret|api[_-]?key|authorization)\b[\"']?\s*[=:]\s*"
    r"(?:bearer\s+)?)([^\s\"',;]+)|(\bbearer\s+)([^\s\"',;]+)|(://[^/\s:@]+:)([^@\s/]+)(@)"
)
CAUSE_LINE_LIMIT = 300


def mask_secretish(text: str) -> str:
    """Values that look like secrets (`token=…`, `Bearer …`, a URL's password) masked."""

    def masked(match: re.Match[str]) -> str:
        groups = match.groups()
        for i in (0, 2, 4):
            if groups[i] is not None:
                tail = groups[i + 2] if i == 4 else ""
                return f"{groups[i]}{SecretMasker.MASK}{tail}"
        return match[0]

    return _SECRETISH.sub(masked, text)


# A flag whose next argument is a secret (`--api-key sk-…`, `--token T`), as a server's
# arguments may carry one.
_SECRET_FLAG = re.compile(r"(?i)^--?[\w-]*(?:token|password|passwd|secret|api[_-]?key|auth\w*)$")


def arg_secrets(args: Iterable[str]) -> list[str]:
    """The secret values in a program's arguments: a value after a secret-named flag (`=` or
    the next argument) and a URL's password (`postgres://user:pw@host`)."""
    found: list[str] = []
    after_flag = False
    for arg in args:
        if after_flag:
            found.append(arg)
        after_flag = bool(_SECRET_FLAG.match(arg))
        for match in _SECRETISH.finditer(arg):
            groups = match.groups()
            found.extend(g for g in (groups[1], groups[3], groups[5]) if g)
    return [s for s in found if s]


def mask_args(args: Iterable[str]) -> list[str]:
    """A program's arguments with their secret values masked, as environment values are."""
    masked: list[str] = []
    after_flag = False
    for arg in args:
        masked.append(SecretMasker.MASK if after_flag else mask_secretish(arg))
        after_flag = bool(_SECRET_FLAG.match(arg))
    return masked


def cause(text: str, *, lines: int = 2) -> str:
    """The line of another program's output that names why it failed (the first line saying
    why, and the one after it when that is a hint), not merely its last line: bounded, colour
    codes dropped, secret-looking values masked. "no output" when it said nothing."""
    said = [ln.strip() for ln in _ANSI.sub("", text).splitlines() if ln.strip()]
    if not said:
        return "no output"
    start = next((i for pattern in _CAUSES for i, ln in enumerate(said) if pattern.search(ln)), 0)
    picked = said[start : start + lines]
    if len(picked) > 1 and not re.match(r"(?i)(fix|hint|try|run|start|use|set)\b", picked[1]):
        picked = picked[:1]
    return mask_secretish(" — ".join(ln[:CAUSE_LINE_LIMIT] for ln in picked))


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
