"""What `memfuse serve` keeps warm between calls, and one call answered (docs/serve.md): each
call a `Call` of its own, answered by its tool's handler (given in by memfuse.commands.serve)
as that command's envelope, masked and bounded, with a compact text for a model."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memfuse.ledger.uris import UriBook
from memfuse.recall.engine import STORE_DOWN
from memfuse.recall.index import RecallIndex, catch_up, open_index
from memfuse.report import Reporter
from memfuse.run.context import Call, RunContext, WarmStore
from memfuse.run.mcp_server import ToolAnswer, ToolSpec, UnknownTool
from memfuse.run.output import CommandResult
from memfuse.serve.answers import Lines, bounded, masked, text_of
from memfuse.serve.arguments import Arg, BadArguments, read, schema
from memfuse.untrusted import json_printable
from memfuse.workspace.note_file import Marks

RETRY_AFTER = 30.0  # seconds a store that did not answer is left alone before a new session


class ToolRefused(Exception):
    """A call the tool will not carry out as asked: an error result, nothing done."""


@dataclass(frozen=True)
class Tool:
    """A tool, declared once: its name and description, its arguments (the schema listed and
    the reading of a call), `request` (the values read → what `handle` takes; BadArguments
    when they do not fit together) and `handle` (docs/architecture.md, "A serve tool")."""

    name: str
    description: str
    args: tuple[Arg, ...]
    handle: Callable[[Service, Call, Any], CommandResult]
    request: Callable[[dict[str, Any]], Any] = dict
    read_only: bool = True  # False for a tool that writes (the client may ask before it runs)
    lines_of: Lines | None = None  # its compact text for a model; None: the command's lines

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, schema(self.args), self.read_only)


@dataclass
class CallReporter(Reporter):
    """One call's warnings. What the store's guard says is kept apart (`store_said`), to be
    told as one warning with what the call did without the store."""

    store_said: list[str] = field(default_factory=list)

    def warn(self, message: str, *, guard: bool = False) -> None:
        if not guard:
            super().warn(message)
            return
        message = self.mask(message)
        self.logger.warning(message)
        with self._lock:
            self.guard_failures += 1
            self.store_said.append(message)


class Service:
    """What stays warm between calls, and one call answered."""

    def __init__(
        self,
        ctx: RunContext,
        tools: Sequence[Tool],
        *,
        warm_up: Callable[[Service, Call], None],
        pinned_now: bool,
        clock: Callable[[], float] = time.monotonic,
        retry_after: float = RETRY_AFTER,
    ) -> None:
        self.run = ctx
        self.tools = {tool.name: tool for tool in tools}
        self.pinned_now = pinned_now
        self._warm_up = warm_up
        self.store = WarmStore(ctx, retry_after=retry_after, clock=clock)
        self._opened: list[RecallIndex] = []  # every index opened, the warm-up's first
        self._idle: list[RecallIndex] = []  # those no call holds now
        self._lock = threading.Lock()
        self.uris = UriBook(ctx.workspace.state)  # read again only after a sync wrote the ledger
        self.marks = Marks(ctx.workspace.state)  # where the last notes in its journals went
        # the Markdown as each index last caught up: unchanged, no look at every journal
        self._stamps: dict[int, object] = {}
        # What the run said before serving (a refused config key): told with the first answer.
        self._notices = list(ctx.reporter.warnings)

    @property
    def index(self) -> RecallIndex | None:
        """The first index opened (the warm-up's), if any."""
        return self._opened[0] if self._opened else None

    @property
    def specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self.tools.values()]

    def warm(self) -> None:
        """Before the first question: the index opened and up to date, one question walked
        through the answer's own path (`warm_up`), and the store's server started last."""
        reporter = CallReporter()
        reporter.begin(self.run.reporter.mask, self.run.reporter.logger)
        call = self._call(reporter)
        self._warm_up(self, call)
        self._notices += reporter.warnings
        call.store.tools()  # starts the store's server (a failure: the first call says it)

    def close(self) -> None:
        self.store.close()
        for index in self._opened:
            index.close()

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolAnswer:
        """One tool call: its envelope, with a compact text, or an error the caller can act on."""
        tool = self.tools.get(name)
        if tool is None:
            raise UnknownTool(name)
        started = time.monotonic()
        reporter = CallReporter()
        reporter.begin(self.run.reporter.mask, self.run.reporter.logger)
        try:
            request = tool.request(read(arguments, tool.args))
        except BadArguments as exc:
            return _refused(name, exc, reporter)
        call = self._call(reporter)
        store = call.store
        try:
            result = tool.handle(self, call, request)
        except ToolRefused as exc:
            return _refused(name, exc, reporter)
        finally:
            self.store.settle(store, reporter.store_said[0] if reporter.store_said else None)
            self.run.server_log.trim()  # the one store server's stderr, bounded for days
        with self._lock:
            warnings, self._notices = [*self._notices, *reporter.warnings], []
        if reporter.store_said:
            cause = reporter.store_said[0]
            if STORE_DOWN in warnings:
                warnings[warnings.index(STORE_DOWN)] = f"{STORE_DOWN} ({cause})"
            else:
                warnings.append(f"the store did not answer: {cause}")
        result = replace(result, warnings=tuple(warnings), guard_failures=reporter.guard_failures)
        envelope = result.envelope(int((time.monotonic() - started) * 1000), store.busy_ms)
        envelope = bounded(masked(envelope, reporter.mask))
        human = [reporter.mask(line) for line in result.human]
        return ToolAnswer(text_of(envelope, human, tool.lines_of), envelope)

    def _call(self, reporter: Reporter) -> Call:
        """A call's own clock, warnings and store client; the run's workspace and classifier."""
        run = self.run
        settings = run.settings
        if not self.pinned_now:
            settings = replace(settings, now=run.seams.clock())
        store = self.store.client(reporter)
        return Call(settings, reporter, store, run.workspace, run.classifier)

    @contextlib.contextmanager
    def borrowed(self, warn: Callable[[str], None]) -> Iterator[RecallIndex | None]:
        """An index no other call holds (opened when all are held), brought up to date; None,
        said with every call until it opens, when it cannot be used."""
        try:
            index = self._idle.pop()  # a list's pop is atomic
        except IndexError:
            opened = open_index(self.run.workspace.state, warn)
            if opened is None:
                yield None
                return
            index = opened
            self._opened.append(index)
        try:
            workspace, embedder = self.run.workspace, self.run.embedder
            stamp = workspace.markdown_stamp()
            behind = stamp != self._stamps.get(id(index))
            if (behind or (embedder is not None and index.unembedded)) and catch_up(
                index, workspace, self.run.classifier, warn, embedder
            ):
                self._stamps[id(index)] = stamp
            yield index
        finally:
            self._idle.append(index)

    def embed_written(self) -> None:
        """After a note was answered: an index caught up, the note embedded (off the answer)."""
        reporter = CallReporter()  # what it says goes to the log
        reporter.begin(self.run.reporter.mask, self.run.reporter.logger)
        with self.borrowed(reporter.warn):
            pass


def _refused(tool: str, exc: Exception, reporter: Reporter) -> ToolAnswer:
    return ToolAnswer(json_printable(reporter.mask(f"{tool}: {exc}")), None, error=True)
