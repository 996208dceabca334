"""`memfuse serve`: recall, where, status and note as the tools of an MCP server over stdio
(docs/serve.md), each call handed to its command's own engine or to the note writer."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from memfuse import __version__
from memfuse.recall import engine
from memfuse.recall.engine import QUESTION_MAX, RecallRequest
from memfuse.recall.reranking import Reranking
from memfuse.run.context import Call, RunContext
from memfuse.run.mcp_server import serve_stdio
from memfuse.run.output import CommandResult
from memfuse.run.results import ServeData
from memfuse.serve import answers, note
from memfuse.serve import arguments as args
from memfuse.serve.arguments import BadArguments
from memfuse.serve.service import RETRY_AFTER, Service, Tool
from memfuse.views import status, where
from memfuse.workspace.note import plan

LIMIT_MAX = 50  # results one recall may ask for
DAYS_MAX = 36500
REQUEST_MAX = 256 * 1024  # bytes of one request line
TYPES = ("emotion", "knowledge", "event", "identity")

INSTRUCTIONS = (
    "memfuse answers from the agent's own memory: its Markdown journals, MEMORY.md and the"
    " agent-memory store. Call `recall` before answering about past work, decisions or"
    " preferences; `where` for one bullet's history; `status` when asked about memory health;"
    " `note` to write down, in one line, something worth remembering."
)


def run(ctx: RunContext, *, pinned_now: bool) -> CommandResult:
    """Serve until stdin closes. `pinned_now`: the clock was given (--now) and stays."""
    served = service(ctx, pinned_now=pinned_now)
    answered = serve_stdio(
        served.specs, served.call, name="memfuse", version=__version__,
        instructions=INSTRUCTIONS, log=ctx.reporter.logger, mask=ctx.reporter.mask,
        warm=served.warm, close=served.close, request_max=REQUEST_MAX,
        after_write=served.embed_written,
    )  # fmt: skip
    data: ServeData = {"calls": answered}
    return CommandResult("serve", data)


def service(
    ctx: RunContext,
    *,
    pinned_now: bool,
    clock: Callable[[], float] = time.monotonic,
    retry_after: float = RETRY_AFTER,
) -> Service:
    """The serve engine with memfuse's tools: the commands' own flows behind each."""
    return Service(
        ctx, TOOLS, warm_up=_warm_up,
        pinned_now=pinned_now, clock=clock, retry_after=retry_after,
    )  # fmt: skip


def _recall(service: Service, call: Call, request: RecallRequest) -> CommandResult:
    s = call.settings
    reranking = Reranking(s.rerank, service.run.seams.rerank_factory, call.reporter, s.now)
    with service.borrowed(call.reporter.warn) as index:
        services = engine.RecallServices(
            store=call.store.recall, index=index, reranking=reranking, uris=service.uris,
            warn=call.reporter.warn, now=s.now, embedder=service.run.embedder,
        )  # fmt: skip
        return CommandResult("recall", engine.ask(services, request))


def _warm_up(service: Service, call: Call) -> None:
    """A note planned on no journal (pure: the reader's imports paid before any note), then
    one question through recall's own path, the local index alone (the store's recall is
    not asked: it counts what it returns as read), so that the first real one pays nothing
    a later one does not."""
    plan(None, "memfuse warm-up", call.settings.now, "")
    request = RecallRequest("memfuse warm-up", 1, without=frozenset({"store", "rerank"}))
    _recall(service, call, request)


def _recall_request(given: dict[str, Any]) -> RecallRequest:
    since, until = given["since"], given["until"]
    if since is not None and until is not None and since > until:
        raise BadArguments(f"since {since} is after until {until}")
    return RecallRequest(
        given["query"], given["limit"], given["types"], given["days"], frozenset(),
        since=since, until=until,
    )  # fmt: skip


RECALL = Tool(
    "recall",
    "Search the agent's memory (journals, MEMORY.md and the store), best first, each result"
    " with where it is written (memory/2026-12-01.md:7) and its store URI. The text is a"
    " summary; `memfuse recall --json`'s envelope is in the result's _meta.",
    (
        args.text(
            "query", QUESTION_MAX,
            "What to look for, in words (dates such as 'last week' or '2026-03-14' count).",
        ),
        args.whole("limit", 1, LIMIT_MAX, default=10),
        args.whole("days", 1, DAYS_MAX, "Only what is from the last N days."),
        args.day("since", "Only what is from this day on."),
        args.day("until", "Only what is from this day or before."),
        args.some_of("types", TYPES),
    ),
    _recall,
    _recall_request,
    lines_of=answers.recall_lines,
)  # fmt: skip
WHERE = Tool(
    "where",
    "One bullet's story: its journal line, URI and type, every answer the store gave it,"
    " and whether the store holds it now. Give some of its text, its URI, or FILE:LINE."
    " `memfuse where --json`'s envelope is in the result's _meta.",
    (args.text("what", QUESTION_MAX),),
    lambda _service, call, given: where.run(call, given["what"]),
    lines_of=answers.where_lines,
)
STATUS = Tool(
    "status",
    "The memory lifecycle at a glance: the last sync/surface/tidy runs, RECENT.md's age,"
    " the ledger, the lock, and alarms that need a person (status `escalated`)."
    " `memfuse status --json`'s envelope is in the result's _meta.",
    (),
    lambda _service, call, _given: status.run(call),
)
TOOLS = (RECALL, WHERE, STATUS, note.TOOL)
