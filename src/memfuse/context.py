"""What one run works with: settings, the warning reporter, and a lazily opened gateway."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from memfuse.config import Settings
from memfuse.gateway import Gateway, Guard, open_gateway
from memfuse.output import Reporter

Advance = Callable[[], None]
ProgressFactory = Callable[[str, int], AbstractContextManager[Advance]]


@contextlib.contextmanager
def no_progress(_label: str, _total: int) -> Iterator[Advance]:
    yield lambda: None


@dataclass
class RunContext:
    settings: Settings
    reporter: Reporter = field(default_factory=Reporter)
    dry_run: bool = False
    gateway_factory: Callable[[Settings], Gateway] = open_gateway
    progress: ProgressFactory = no_progress  # the CLI passes a progress bar on a terminal
    _guard: Guard | None = None

    @property
    def guard(self) -> Guard:
        if self._guard is None:
            self._guard = Guard(
                self.gateway_factory(self.settings), self.reporter, jobs=self.settings.jobs
            )
        return self._guard

    @property
    def calls_made(self) -> int:
        return self._guard.calls if self._guard is not None else 0

    def close(self) -> None:
        if self._guard is not None:
            self._guard.gateway.close()
