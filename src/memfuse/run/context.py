"""What one run works with: settings, the warning reporter, and a lazily opened gateway."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memfuse.run.output import Reporter
from memfuse.settings import RerankSettings, Settings
from memfuse.store.connect import connect, open_gateway
from memfuse.store.gateway import Gateway, Guard
from memfuse.workspace.confine import WorkspaceFiles

if TYPE_CHECKING:
    from memfuse.recall.rerank import RerankClient

Advance = Callable[[], None]
ProgressFactory = Callable[[str, int], AbstractContextManager[Advance]]
GatewayFactory = Callable[[Settings], Gateway]
RerankFactory = Callable[[RerankSettings], "RerankClient"]


@contextlib.contextmanager
def no_progress(_label: str, _total: int) -> Iterator[Advance]:
    yield lambda: None


def open_reranker(settings: RerankSettings) -> RerankClient:
    from memfuse.recall.rerank import RerankClient  # httpx is loaded only by runs that rerank

    return RerankClient(settings)


@dataclass
class Seams:
    """How a run reaches the outside world; tests pass scripted fakes here."""

    gateway_factory: GatewayFactory = open_gateway
    rerank_factory: RerankFactory = open_reranker


@dataclass
class RunContext:
    settings: Settings
    reporter: Reporter = field(default_factory=Reporter)
    dry_run: bool = False
    gateway_factory: GatewayFactory = open_gateway
    rerank_factory: RerankFactory = open_reranker
    progress: ProgressFactory = no_progress  # the CLI passes a progress bar on a terminal
    verbose: bool = False
    transport_why: str | None = None  # why the real gateway took its transport, once opened
    _guard: Guard | None = None
    _files: WorkspaceFiles | None = None

    @property
    def guard(self) -> Guard:
        if self._guard is None:
            if self.gateway_factory is open_gateway:
                gateway, why = connect(self.settings)  # the real one says why it chose
                self.transport_why = why
                self.reporter.info(f"transport {gateway.name} ({why})")
                if self.verbose:
                    self.reporter.echo(f"transport: {gateway.name} ({why})")
            else:
                gateway = self.gateway_factory(self.settings)
            self._guard = Guard(gateway, self.reporter, jobs=self.settings.jobs)
        return self._guard

    @property
    def files(self) -> WorkspaceFiles:
        """Reads and writes confined to the workspace (see memfuse.workspace.confine)."""
        if self._files is None:
            self._files = WorkspaceFiles(self.settings.workspace, self.settings.read_cap)
        return self._files

    @property
    def calls_made(self) -> int:
        return self._guard.calls if self._guard is not None else 0

    @property
    def store_outcome(self) -> str:
        """ok (the store answered), failed (calls were due, none answered) or idle."""
        from memfuse.run.history import store_outcome

        g = self._guard
        return store_outcome(g.calls, g.skipped, g.reached) if g is not None else "idle"

    def close(self) -> None:
        if self._guard is not None:
            self._guard.gateway.close()
