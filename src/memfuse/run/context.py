"""What one run works with, built here and nowhere else (docs/architecture.md, "One run"); for
serve, the store session kept warm across its calls (`WarmStore`) and each call's own (`Call`)."""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from memfuse.errors import ConfigError, MemfuseError
from memfuse.ledger.ledger import Ledger
from memfuse.recall import vectors
from memfuse.recall.index import refresh_index
from memfuse.recall.reranker import RerankClient
from memfuse.recall.reranking import RerankFactory, Reranking
from memfuse.recall.semantic import Embedder, installed
from memfuse.report import Reporter
from memfuse.run.server_log import ServerLog
from memfuse.schedule.base import ToolRunner, run_tool
from memfuse.settings import Settings
from memfuse.state.folder import default_state_dir
from memfuse.store import owner
from memfuse.store.client import StoreClient
from memfuse.store.connect import Server, connect, find_server
from memfuse.store.diagnose import Check, config_check, setup_faults
from memfuse.store.gateway import Answer, CallFailed, GatewayError, ToolMissing
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Workspace

if TYPE_CHECKING:
    from memfuse.store.gateway import Gateway

Advance = Callable[[], None]
ProgressFactory = Callable[[str, int], AbstractContextManager[Advance]]
# settings, the server's entry, where its stderr goes → a gateway, and why that transport
GatewayFactory = Callable[[Settings, Server, Callable[[], TextIO] | None], tuple["Gateway", str]]


@contextlib.contextmanager
def no_progress(_label: str, _total: int) -> Iterator[Advance]:
    yield lambda: None


def wall_clock() -> datetime:
    """The real time, in this machine's zone."""
    return datetime.now().astimezone()


@dataclass
class Seams:
    """How a run reaches the outside world; tests pass scripted fakes here. `clock` is read
    by serve for each call; a one-shot run's clock is `settings.now`, read once."""

    gateway_factory: GatewayFactory = connect
    rerank_factory: RerankFactory = RerankClient
    clock: Callable[[], datetime] = wall_clock
    # recall's model of meaning: the `semantic` extra's when installed, else none
    embedder_factory: Callable[[], Embedder | None] = installed
    # how a scheduler runs its own program (schedule.base.run_tool: bounded in time)
    tool: ToolRunner = run_tool


@dataclass
class RunContext:
    settings: Settings
    reporter: Reporter = field(default_factory=Reporter)
    dry_run: bool = False
    seams: Seams = field(default_factory=Seams)
    progress: ProgressFactory = no_progress  # the CLI passes a progress bar on a terminal
    verbose: bool = False
    transport_why: str | None = None  # why the gateway took its transport, once opened
    claims: bool = False  # a database nobody claimed becomes this workspace's (memfuse.store.owner)
    sharing: tuple[str, ...] = ()  # workspaces known to share the store: `rollback --shared-with`
    _store: StoreClient | None = None
    _ledger: Ledger | None = None
    # run once the workspace lock is let go (memfuse.run.runner): the embedding of what is new
    # Each step answers what it adds to the run's data (the runner adds it, in the open).
    afterwards: list[Callable[[], dict[str, Any]]] = field(default_factory=list)

    def embed_afterwards(self) -> None:
        """After the lock, what is new embedded within vectors.RUN (how many: the data's
        `recall_index_embedded`)."""
        embedder = self.embedder
        if self.dry_run or embedder is None:
            return

        def embed() -> dict[str, Any]:
            warn = self.reporter.warn
            done = refresh_index(self.workspace, self.classifier, warn, embedder, vectors.RUN)
            return {} if done is None else {"recall_index_embedded": done[1]}

        self.afterwards.append(embed)

    @functools.cached_property
    def server(self) -> Server:
        """The server's entry, read once for the run (or why it cannot be read)."""
        return find_server(self.settings)

    @property
    def store(self) -> StoreClient:
        """agent-memory, through the best-effort guard: every store call goes here."""
        if self._store is None:
            self.refuse_crossing()
            gateway, why = self._unset() or self.seams.gateway_factory(
                self.settings, self.server, self.server_stderr()
            )
            self.transport_why = why
            self.reporter.info(f"transport {gateway.name} ({why})")
            if self.verbose:
                self.reporter.echo(self.reporter.mask(f"transport: {gateway.name} ({why})"))
            self._store = StoreClient(
                gateway,
                self.reporter,
                jobs=self.settings.jobs,
                tz=self.settings.now.tzinfo,
                server_env=self.server_env,
            )
        return self._store

    def refuse_crossing(self) -> None:
        """ConfigError when the store's entry serves another workspace (memfuse.store.owner)."""
        why = owner.check(self.settings, self.server, claim=self.claims, sharing=self.sharing)
        if why is not None:
            raise ConfigError(why)

    def _unset(self) -> tuple[Gateway, str] | None:
        """No transport when it is chosen automatically, mcporter is not installed and the
        mcporter config cannot give the server's entry: every call fails with the cause, as
        doctor names it, not with mcporter's absence. An installed mcporter is tried: it merges
        the editors' configs in."""
        if self.settings.transport != "auto" or not isinstance(self.server, ConfigError):
            return None
        with contextlib.suppress(ValueError):  # a command shlex cannot split runs nowhere
            argv = shlex.split(self.settings.mcporter or "mcporter")
            if argv and shutil.which(argv[0]):
                return None
        entry = config_check(self.settings, os.environ)
        if entry is None or not entry.fault:
            return None
        why = entry.line()
        return NoStore("unset", why, ToolMissing), f"auto: no server entry ({why})"

    @property
    def ledger(self) -> Ledger:
        """The sync ledger, opened for writing on first use, closed with the run; or LedgerError."""
        if self._ledger is None:
            self._ledger = Ledger(self.workspace.state)
        return self._ledger

    def server_stderr(self) -> Callable[[], TextIO] | None:
        """Where a session server writes its stderr (None: no state folder to keep it)."""
        return self.server_log.for_server if self.workspace.state.exists() else None

    @functools.cached_property
    def server_log(self) -> ServerLog:
        """The session server's stderr log."""
        return ServerLog(self.workspace.state)

    def server_said(self) -> str | None:
        """The line the store's server wrote on stderr naming why it failed, masked; or None."""
        said = self.server_log.said()
        return self.reporter.mask(said)[:600] if said else None

    def server_env(self) -> dict[str, str] | None:
        """The environment the server's entry gives it (None: the entry cannot be read)."""
        server = self.server
        return None if isinstance(server, Exception) else dict(server.env)

    @functools.cached_property
    def reranking(self) -> Reranking:
        """The external reranker's step, as this run uses it."""
        s = self.settings
        return Reranking(s.rerank, self.seams.rerank_factory, self.reporter, s.now)

    @functools.cached_property
    def embedder(self) -> Embedder | None:
        """The model recall ranks by meaning with (loaded when it first embeds), or None."""
        return self.seams.embedder_factory() if self.settings.semantic != "off" else None

    @functools.cached_property
    def classifier(self) -> Classifier:
        s = self.settings
        return Classifier(s.knowledge_keywords, s.emotion_keywords)

    @functools.cached_property
    def workspace(self) -> Workspace:
        """The workspace's layout and Markdown, through its confined file access."""
        s = self.settings
        state = s.state_dir or default_state_dir(s.workspace, os.environ)
        return Workspace(s.workspace, state, s.read_cap)

    def setup_faults(self) -> list[Check]:
        """Why this run reached no store, when the store's setup is why, named by doctor's own
        checks; [] when the store answered, was not asked, or is set up and down."""
        store = self._store
        if store is None or store.outcome != "failed":
            return []
        warnings = self.reporter.warnings
        said = self.server_said()
        return setup_faults(
            self.settings,
            self.server,
            transport=store.transport,
            bridge_version=store.bridge_version,
            last=warnings[0] if warnings else "no answer",
            said=said,
            log=self.workspace.state.server_log if said else None,
            env=os.environ,
        )

    @property
    def calls_made(self) -> int:
        return self._store.calls if self._store is not None else 0

    @property
    def store_ms(self) -> int:
        return self._store.busy_ms if self._store is not None else 0

    @property
    def store_outcome(self) -> str:
        """ok (the store answered), failed (calls were due, none answered) or idle."""
        return self._store.outcome if self._store is not None else "idle"

    def close_ledger(self) -> None:
        """Close the ledger (while the run holds the lock); a later use opens it again."""
        if self._ledger is not None:
            self._ledger.close()
        self._ledger = None

    def close(self) -> None:
        """Close what the run opened: the store client, the ledger."""
        self.close_ledger()
        if self._store is not None:
            self._store.close()


RESTING = "resting"  # the store's transport while a long-lived command waits to try it again


class NoStore:
    """The store when it cannot be asked: every call fails at once with why, as `error` — a
    ToolMissing where the setup names no server it can start (the guard's breaker trips on the
    first); a CallFailed while serve waits to try it again (the call's warning)."""

    costly_listing = False

    def __init__(self, name: str, why: str, error: type[GatewayError]) -> None:
        self.name = name
        self.why = why
        self.error = error

    def call(self, tool: str, arguments: Any) -> Answer:
        raise self.error(self.why)

    def list_tools(self) -> list[str]:
        raise self.error(self.why)

    def close(self) -> None:
        """Nothing is held."""

    def version(self) -> None:
        """No bridge is run."""


class WarmStore:
    """One store session kept across the calls of a long-lived command (`memfuse serve`): a
    client per call over the one gateway; a store that did not answer rests `retry_after`
    seconds (calls fail at once, saying why), then a new gateway is opened."""

    def __init__(
        self,
        run: RunContext,
        *,
        retry_after: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.run = run
        self.retry_after = retry_after
        self.clock = clock
        self._gateway: Gateway | None = None
        self._rest_until = 0.0
        self._why = ""
        self._lock = threading.Lock()

    def client(self, reporter: Reporter) -> StoreClient:
        """A client for one call: over the warm gateway, or over a resting one."""
        with self._lock:
            if self._gateway is None and self.clock() < self._rest_until:
                left = self._rest_until - self.clock()
                why = f"{self._why} (asked again in {left:.0f} s)"
                gateway: Gateway = NoStore(RESTING, why, CallFailed)
            else:
                gateway = self._gateway or self._open()
        settings = self.run.settings
        return StoreClient(
            gateway, reporter, jobs=settings.jobs, tz=settings.now.tzinfo,
            server_env=self.run.server_env,
        )  # fmt: skip

    def _open(self) -> Gateway:
        """A new gateway; a resting one (for `retry_after`) when none can be made."""
        try:
            run = self.run
            run.refuse_crossing()
            self._gateway, _why = run.seams.gateway_factory(
                run.settings, run.server, run.server_stderr()
            )
        except MemfuseError as exc:
            self._why = f"the store cannot be reached: {exc}"
            self._rest_until = self.clock() + self.retry_after
            return NoStore(RESTING, self._why, CallFailed)
        return self._gateway

    def settle(self, client: StoreClient, why: str | None) -> None:
        """After a call: a store that was asked and never answered (`why`) rests."""
        if client.transport == RESTING or client.outcome != "failed":
            return
        with self._lock:
            gateway, self._gateway = self._gateway, None
            self._why = f"the store did not answer at {time.strftime('%H:%M:%S')}: {why}"
            self._rest_until = self.clock() + self.retry_after
        if gateway is not None:
            with contextlib.suppress(Exception):
                gateway.close()

    def close(self) -> None:
        with self._lock:
            gateway, self._gateway = self._gateway, None
        if gateway is not None:
            gateway.close()


@dataclass(frozen=True)
class Call:
    """One call of serve's tools: its settings (its clock), warnings and store client."""

    settings: Settings
    reporter: Reporter
    store: StoreClient
    workspace: Workspace
    classifier: Classifier


Asking = RunContext | Call  # what a view (memfuse.views) reads: a command's run, or one call
