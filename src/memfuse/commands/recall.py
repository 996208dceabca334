"""`memfuse recall QUERY`: one ranked answer from the Markdown and the store, for the agent
(memfuse.recall.engine); `--batch`, one envelope per line of stdin, one index for them all."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TextIO

from memfuse.errors import ExitCode
from memfuse.ledger.reader import uris_of
from memfuse.recall.engine import QUESTION_MAX, STAGES, RecallRequest, RecallServices, ask
from memfuse.recall.index import RecallIndex, catch_up, open_index
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import RecallBatchData, RecallData
from memfuse.untrusted import json_printable

__all__ = ["QUESTION_MAX", "STAGES", "RecallRequest", "questions", "run", "run_batch", "services"]


def services(ctx: RunContext, request: RecallRequest, index: RecallIndex | None) -> RecallServices:
    """What the engine answers with, from a run's context."""
    state = ctx.workspace.state
    return RecallServices(
        # The store's session is opened when the engine first asks it (`--without store`: never).
        store=lambda query, limit: ctx.store.recall(query, limit),  # noqa: PLW0108
        index=index,
        reranking=ctx.reranking,
        uris=lambda ids: uris_of(state, ids),
        warn=ctx.reporter.warn,
        now=ctx.settings.now,
        embedder=None if "meaning" in request.without else ctx.embedder,
    )


@contextlib.contextmanager
def _index(ctx: RunContext, request: RecallRequest) -> Iterator[RecallIndex | None]:
    """The local index, opened and brought up to date once for every question of the run."""
    if "index" in request.without:
        yield None
        return
    index = open_index(ctx.workspace.state, ctx.reporter.warn)
    if index is not None:
        embedder = None if "meaning" in request.without else ctx.embedder
        catch_up(index, ctx.workspace, ctx.classifier, ctx.reporter.warn, embedder)
    try:
        yield index
    finally:
        if index is not None:
            index.close()


def run(ctx: RunContext, request: RecallRequest) -> CommandResult:
    with _index(ctx, request) as index:
        data: RecallData = ask(services(ctx, request, index), request)
    # The answer is the product, for an agent's prompt: printed even under -q.
    return CommandResult("recall", data, payload="\n".join(render.recall(data)))


def run_batch(
    ctx: RunContext, request: RecallRequest, questions: Iterable[str], emit: Callable[[str], bool]
) -> CommandResult:
    """One JSON envelope per question, each with its own warnings and time, printed (`emit`)
    as soon as it is answered; the batch ends with its input, or when emit says False."""
    answered = 0
    with _index(ctx, request) as index:
        for question in questions:
            answered += 1
            line = _envelope(ctx, index, replace(request, query=question))
            if not emit(ctx.reporter.mask(line)):
                break
    data: RecallBatchData = {"queries": answered}
    return CommandResult("recall", data)


def questions(stream: TextIO) -> Iterator[str]:
    """The lines of a batch, each cut at QUESTION_MAX + 1 characters (a longer one is refused
    by its envelope, and what is left of it read and dropped): memory stays bounded whatever
    is piped in."""
    while line := stream.readline(QUESTION_MAX + 1):
        if len(line) > QUESTION_MAX and not line.endswith("\n"):
            while (rest := stream.readline(65536)) and not rest.endswith("\n"):
                pass
        yield line.rstrip("\n").strip()


def _envelope(ctx: RunContext, index: RecallIndex | None, request: RecallRequest) -> str:
    """One question's envelope, the shape of every run's (memfuse.run.output)."""
    started, store_before = time.monotonic(), ctx.store_ms
    seen = len(ctx.reporter.warnings)
    failures = ctx.reporter.guard_failures
    code = ExitCode.OK
    if not request.query:
        data: dict[str, object] = {"error": "an empty line is not a question"}
        code = ExitCode.USAGE
    elif len(request.query) > QUESTION_MAX:
        data = {"error": f"a question longer than {QUESTION_MAX} characters is not one"}
        code = ExitCode.USAGE
    else:
        data = dict(ask(services(ctx, request, index), request))
        data["store_ms"] = ctx.store_ms - store_before  # kept here too, where 1 had it
    result = CommandResult(
        "recall", data, warnings=tuple(ctx.reporter.warnings[seen:]),
        guard_failures=ctx.reporter.guard_failures - failures, exit_code=code,
    )  # fmt: skip
    duration = int((time.monotonic() - started) * 1000)
    envelope = result.envelope(duration, ctx.store_ms - store_before)
    return json_printable(json.dumps(envelope, ensure_ascii=False))
