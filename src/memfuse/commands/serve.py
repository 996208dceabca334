"""`memfuse serve`: recall, where and status as the tools of an MCP server over stdio, for an
agent to call in-session instead of starting a process per question.

What a process pays per question is paid once: the settings, the local recall index (kept
open, and brought up to date before every answer: only what changed is re-read), and one
store session (through `RunContext.warm_store`: after a call the store did not answer, it
rests and is tried again later, and meanwhile the journals answer with one warning). Each
call is answered by the engine the command answers with (memfuse.recall.engine; where.py
and status.py) on a context of its own — its clock, its warnings, its store client — and comes
back as that command's `--json` envelope.

Read-only: it writes no journal, MEMORY.md, RECENT.md, ledger or run history, and takes no
workspace lock (cron's runs never wait for it); the recall index it refreshes is derived
state (docs/decisions.md 130). Every argument is bounded, every answer is cut to ANSWER_MAX,
every text masked.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from memfuse import __version__
from memfuse.commands import status, where
from memfuse.ledger.uris import UriBook
from memfuse.recall import engine
from memfuse.recall.engine import QUESTION_MAX, STORE_DOWN, Request
from memfuse.recall.index import RecallIndex, catch_up, open_index
from memfuse.recall.meaning import by_meaning
from memfuse.report import Reporter
from memfuse.run.context import RunContext, WarmStore
from memfuse.run.mcp_server import ToolAnswer, ToolSpec, UnknownTool, serve_stdio
from memfuse.run.output import CommandResult
from memfuse.run.results import ServeData
from memfuse.untrusted import json_printable

RETRY_AFTER = 30.0  # seconds a store that did not answer is left alone before a new session
LIMIT_MAX = 50  # results one recall may ask for
DAYS_MAX = 36500
TEXT_MAX = 4000  # characters of one text in an answer (a bullet may be a page long)
ANSWER_MAX = 256 * 1024  # bytes of one answer's JSON
REQUEST_MAX = 256 * 1024  # bytes of one request line
TYPES = ("emotion", "knowledge", "event", "identity")
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

INSTRUCTIONS = (
    "memfuse answers from the agent's own memory: its Markdown journals, MEMORY.md and the"
    " agent-memory store. Call `recall` before answering about past work, decisions or"
    " preferences; `where` for one bullet's history; `status` when asked about memory health."
)
_DAY_SCHEMA = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}
TOOLS = [
    ToolSpec(
        "recall",
        "Search the agent's memory (journals, MEMORY.md and the store), best first, each result"
        " with where it is written (memory/2026-12-01.md:7) and its store URI. The answer is"
        " `memfuse recall --json`'s envelope.",
        {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": QUESTION_MAX,
                    "description": "What to look for, in words (dates such as 'last"
                    " week' or '2026-03-14' count).",
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX, "default": 10},
                "days": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": DAYS_MAX,
                    "description": "Only what is from the last N days.",
                },
                "since": {**_DAY_SCHEMA, "description": "Only what is from this day on."},
                "until": {**_DAY_SCHEMA, "description": "Only what is from this day or before."},
                "types": {"type": "array", "items": {"enum": list(TYPES)}, "maxItems": 4},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "where",
        "One bullet's story: its journal line, URI and type, every answer the store gave it,"
        " and whether the store holds it now. Give some of its text, its URI, or FILE:LINE."
        " The answer is `memfuse where --json`'s envelope.",
        {
            "type": "object",
            "properties": {"what": {"type": "string", "minLength": 1, "maxLength": QUESTION_MAX}},
            "required": ["what"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "status",
        "The memory lifecycle at a glance: the last sync/surface/tidy runs, RECENT.md's age,"
        " the ledger, the lock, and alarms that need a person (status `escalated`). The"
        " answer is `memfuse status --json`'s envelope.",
        {"type": "object", "properties": {}, "additionalProperties": False},
    ),
]


class BadArguments(ValueError):
    """A call's arguments the tool does not take: said to the caller, who can correct them."""


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


def run(ctx: RunContext, *, pinned_now: bool) -> CommandResult:
    """Serve until stdin closes. `pinned_now`: the clock was given (--now) and stays."""
    service = Service(ctx, pinned_now=pinned_now)
    answered = serve_stdio(
        TOOLS, service.call, name="memfuse", version=__version__,
        instructions=INSTRUCTIONS, log=ctx.reporter.logger, mask=ctx.reporter.mask,
        warm=service.warm, close=service.close, request_max=REQUEST_MAX,
    )  # fmt: skip
    data: ServeData = {"calls": answered}
    return CommandResult("serve", data)


class Service:
    """What stays warm between calls, and one call answered."""

    def __init__(
        self,
        ctx: RunContext,
        *,
        pinned_now: bool,
        clock: Callable[[], float] = time.monotonic,
        retry_after: float = RETRY_AFTER,
    ) -> None:
        self.ctx = ctx
        self.pinned_now = pinned_now
        self.store: WarmStore = ctx.warm_store(retry_after=retry_after, clock=clock)
        self.index: RecallIndex | None = None
        self.uris = UriBook(ctx.workspace.state)  # read again only after a sync wrote the ledger
        # The Markdown as the index last caught up with it: an unchanged stamp spares the
        # refresh its look at every journal (a `stat` and a path each, ~5 ms at a year).
        self._stamp: object = None
        # What the run said before serving (a refused config key): told with the first answer.
        self._notices = list(ctx.reporter.warnings)

    def warm(self) -> None:
        """Open the index and the store's session before the first question needs them."""
        reporter = CallReporter()
        reporter.begin(self.ctx.reporter.mask, self.ctx.reporter.logger)
        ctx = self._context(reporter)
        self._open_index(ctx)
        self._catch_up(ctx)
        if self.index is not None and ctx.embedder is not None:  # the model loaded now, too
            by_meaning(self.index, ctx.embedder, "warm", reporter.warn)
        self._notices += reporter.warnings
        ctx.store.tools()  # starts the store's server (a failure: the first call says it)

    def close(self) -> None:
        self.store.close()
        if self.index is not None:
            self.index.close()

    def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolAnswer:
        """One tool call: its envelope as JSON text, or an error the caller can correct."""
        answer = _HANDLERS.get(tool)
        if answer is None:
            raise UnknownTool(tool)
        started = time.monotonic()
        reporter = CallReporter()
        reporter.begin(self.ctx.reporter.mask, self.ctx.reporter.logger)
        try:
            request = _PARSERS[tool](arguments)
        except BadArguments as exc:
            message = reporter.mask(f"{tool}: {exc}")
            return ToolAnswer(json_printable(message), None, error=True)
        ctx = self._context(reporter)
        store = ctx.store
        try:
            result = answer(self, ctx, request)
        finally:
            self.store.settle(store, reporter.store_said[0] if reporter.store_said else None)
            self.ctx.trim_server_log()  # the one store server's stderr, bounded for days
        warnings = [*self._notices, *reporter.warnings]
        self._notices = []
        if reporter.store_said:
            cause = reporter.store_said[0]
            if STORE_DOWN in warnings:
                warnings[warnings.index(STORE_DOWN)] = f"{STORE_DOWN} ({cause})"
            else:
                warnings.append(f"the store did not answer: {cause}")
        result = replace(result, warnings=tuple(warnings), guard_failures=reporter.guard_failures)
        envelope = result.envelope(int((time.monotonic() - started) * 1000), store.busy_ms)
        envelope = _bounded(_masked(envelope, reporter.mask))
        text = json_printable(json.dumps(envelope, ensure_ascii=False))
        return ToolAnswer(text, envelope)

    def _context(self, reporter: Reporter) -> RunContext:
        """A call's own context: its clock, its warnings and store client; the workspace,
        classifier and server entry of the run."""
        run = self.ctx
        settings = run.settings
        if not self.pinned_now:
            settings = replace(settings, now=run.seams.clock())
        ctx = RunContext(settings, reporter, seams=run.seams, _store=self.store.client(reporter))
        ctx.workspace = run.workspace
        ctx.classifier = run.classifier
        ctx.server = run.server
        return ctx

    def _open_index(self, ctx: RunContext) -> None:
        """The index, opened once (a failure is said with every recall until it opens)."""
        if self.index is None:
            self.index = open_index(ctx.workspace.state, ctx.reporter.warn)

    # --- the tools ---------------------------------------------------------------------
    def recall(self, ctx: RunContext, request: Request) -> CommandResult:
        self._open_index(ctx)
        self._catch_up(ctx)
        services = engine.Services(
            store=ctx.store.recall, index=self.index, reranking=ctx.reranking, uris=self.uris,
            warn=ctx.reporter.warn, now=ctx.settings.now, embedder=ctx.embedder,
        )  # fmt: skip
        return CommandResult("recall", engine.ask(services, request))

    def _catch_up(self, ctx: RunContext) -> None:
        """The open index brought up to date, when the Markdown changed since it last was."""
        if self.index is None:
            return
        stamp, embedder = ctx.workspace.markdown_stamp(), ctx.embedder
        behind = stamp != self._stamp or (embedder is not None and self.index.unembedded)
        if behind and catch_up(self.index, ctx.workspace, ctx.classifier, ctx.reporter.warn,
                               embedder):  # fmt: skip
            self._stamp = stamp

    def where(self, ctx: RunContext, what: str) -> CommandResult:
        return where.run(ctx, what)

    def status(self, ctx: RunContext, _request: None) -> CommandResult:
        return status.run(ctx)


_HANDLERS: dict[str, Callable[[Service, RunContext, Any], CommandResult]] = {
    "recall": Service.recall,
    "where": Service.where,
    "status": Service.status,
}


# --- arguments: each checked against the bounds the tool lists ---------------------------
def _only(arguments: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    if not isinstance(arguments, Mapping):
        raise BadArguments("arguments must be an object")
    unknown = sorted(str(k)[:40] for k in arguments if k not in allowed)
    if unknown:
        raise BadArguments(
            f"no argument {', '.join(map(repr, unknown[:5]))} (it takes {', '.join(allowed)})"
        )


def _text(arguments: Mapping[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise BadArguments(f"{name} must be a non-empty string")
    if len(value) > QUESTION_MAX:
        raise BadArguments(f"{name} is longer than {QUESTION_MAX} characters")
    return value.strip()


def _integer(arguments: Mapping[str, Any], name: str, low: int, high: int) -> int | None:
    value = arguments.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadArguments(f"{name} must be a whole number from {low} to {high}")
    return value


def _day(arguments: Mapping[str, Any], name: str) -> date | None:
    value = arguments.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not _DAY.fullmatch(value):
        raise BadArguments(f"{name} must be a date as YYYY-MM-DD")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise BadArguments(f"{name} {value!r} is not a day of the calendar") from None


def _recall_request(arguments: Mapping[str, Any]) -> Request:
    _only(arguments, ("query", "limit", "days", "since", "until", "types"))
    query = _text(arguments, "query")
    limit = _integer(arguments, "limit", 1, LIMIT_MAX)
    days = _integer(arguments, "days", 1, DAYS_MAX)
    since, until = _day(arguments, "since"), _day(arguments, "until")
    if since is not None and until is not None and since > until:
        raise BadArguments(f"since {since} is after until {until}")
    types = arguments.get("types") or []
    if not isinstance(types, list) or len(types) > len(TYPES) or not set(types) <= set(TYPES):
        raise BadArguments(f"types must be a list of {', '.join(TYPES)}")
    return Request(query, limit or 10, tuple(types), days, frozenset(), since=since, until=until)


def _where_request(arguments: Mapping[str, Any]) -> str:
    _only(arguments, ("what",))
    return _text(arguments, "what")


def _status_request(arguments: Mapping[str, Any]) -> None:
    _only(arguments, ())


_PARSERS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "recall": _recall_request,
    "where": _where_request,
    "status": _status_request,
}


# --- answers: masked and bounded ---------------------------------------------------------
def _masked(value: Any, mask: Callable[[str], str]) -> Any:
    """Every text in an answer with the secrets masked, and cut at TEXT_MAX characters."""
    if isinstance(value, str):
        text = mask(value)
        return text if len(text) <= TEXT_MAX else text[:TEXT_MAX] + "… [cut]"
    if isinstance(value, dict):
        return {k: _masked(v, mask) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(v, mask) for v in value]
    return value


def _bounded(envelope: dict[str, Any]) -> dict[str, Any]:
    """The envelope within ANSWER_MAX bytes: the last rows of its list dropped (and counted
    in `data.truncated`) until it fits."""
    data = envelope["data"]
    rows = next((data[k] for k in ("results", "bullets") if isinstance(data.get(k), list)), None)
    dropped = 0
    while len(json.dumps(envelope, ensure_ascii=False).encode()) > ANSWER_MAX:
        if not rows:
            return {**envelope, "data": {"error": f"the answer is over {ANSWER_MAX} bytes"}}
        rows.pop()
        dropped += 1
        data["truncated"] = dropped
    if dropped:
        envelope["warnings"].append(f"the answer was cut to {ANSWER_MAX} bytes: {dropped} dropped")
    return envelope
