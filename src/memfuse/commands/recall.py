"""`memfuse recall QUERY`: one ranked answer from the Markdown and the store, for the agent.

Candidates from the local full-text index of the Markdown in every form (memfuse.recall.index:
journals daily, archived and rolled up, and MEMORY.md) and from the store's own `recall` (2 ×
limit, at most 20) are merged by reciprocal rank fusion, a bullet and the memory synced from it
counted once. Who ranks what (measured: docs/recall-quality.md, decisions 93): a bullet is ranked
by the local index, which searches the same text better than the store does; the store's vote
for it would only pull the order towards its weaker ranking. A memory the Markdown does not
hold (the agent stored it itself) is ranked by the store alone, at the local index's weight;
a synced bullet the local index did not find comes after what it did.
The external reranker re-scores them when one is configured (any failure: one warning, the fused
order), and agent-memory's local weighting (priority, vitality) orders the reranked result;
without a reranker the fused rank stands (docs/decisions.md 66). With the store down the local
index answers alone, and `data.sources` says so.

`--batch` answers one question per line of stdin, one JSON envelope per line, in order, with
one store session and one index for them all.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import TextIO

from memfuse.confine import UnsafePath
from memfuse.errors import ExitCode, MemfuseError
from memfuse.ledger.ledger import LedgerError, uris_of
from memfuse.recall.index import REBUILT, Hit, RecallIndex, Stages
from memfuse.recall.reranker import SearchResult, local_weighting
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import RecallBatchData, RecallData, RecallRow
from memfuse.store.answers import StoredMemory
from memfuse.store.decay import priority_of
from memfuse.text.similarity import fold_whitespace
from memfuse.untrusted import json_printable
from memfuse.workspace.position import JOURNAL_PREFIXES, SOURCE_PREFIX

RRF_K = 60
STORE_CANDIDATES_MAX = 20
LOCAL_CANDIDATES = 50  # the local index is cheap to ask deep: fusion and filters need room
# How much a rank counts in the fusion (measured: docs/recall-quality.md, decisions 93): the
# local index's ranks; the store's for a memory the Markdown does not hold; the store's for a
# synced bullet the local index did not return (after its candidates, in the store's order).
LOCAL_WEIGHT = 1.0
STORE_OWN_WEIGHT = 1.0
STORE_SYNCED_WEIGHT = 0.5
STORE_DOWN = "the store did not answer: results come from the journals alone"
QUESTION_MAX = 2000  # characters: a question, not a document (every term of it is searched)
# The stages `--without` can switch off, for the benchmark that measures each one.
STAGES = ("store", "index", "near", "dates", "rerank")


@dataclass(frozen=True)
class Request:
    query: str
    limit: int = 10
    types: tuple[str, ...] = ()
    days: int | None = None
    without: frozenset[str] = field(default_factory=frozenset)
    since: date | None = None  # the journal day (or the store's update) from, inclusive
    until: date | None = None  # … to, inclusive


@dataclass
class Candidate:
    content: str
    type: str
    fused: float = 0.0
    id: str | None = None
    uri: str | None = None
    location: str | None = None
    date: str | None = None
    vitality: float = 1.0
    updated_at: datetime | None = None
    sources: tuple[str, ...] = ()
    store_rank: int | None = None
    synced: bool = False  # the store's copy of a journal bullet (its URI or source says so)


class Searcher:
    """What every question of a run is asked of: the local index, opened and brought up to
    date once (a batch of 500 pays for it once). `memfuse serve` keeps one index open across
    its calls and hands it in: the searcher then brings it up to date and leaves it open."""

    def __init__(
        self,
        ctx: RunContext,
        request: Request,
        index: RecallIndex | None = None,
        *,
        refresh: bool = True,
    ) -> None:
        self.ctx = ctx
        self.index: RecallIndex | None = None
        self._own = index is None
        self.refreshed = False  # the index was brought up to date (not left as it was)
        if "index" in request.without:
            return
        if index is None:
            try:
                index = RecallIndex(ctx.workspace.state)
            except (MemfuseError, OSError) as exc:
                ctx.reporter.warn(f"the local recall index cannot be used: {exc}")
                return
            if index.rebuilt:
                ctx.reporter.warn(REBUILT)
        self.index = index
        if not refresh:
            return
        try:
            index.refresh(ctx.workspace, ctx.classifier, ctx.reporter.warn)
            self.refreshed = True
        except (sqlite3.Error, OSError) as exc:
            # Another process writing the index past the busy timeout (sync's refresh of a
            # year): the index answers as it stands, a refresh behind.
            why = f"the local recall index was not refreshed ({exc}): it answers as it was"
            ctx.reporter.warn(why)

    def close(self) -> None:
        if self.index is not None and self._own:
            self.index.close()


def run(ctx: RunContext, request: Request) -> CommandResult:
    searcher = Searcher(ctx, request)
    try:
        data = answer(ctx, searcher, request)
    finally:
        searcher.close()
    # The answer is the product, for an agent's prompt: printed even under -q.
    return CommandResult("recall", data, payload="\n".join(render.recall(data)))


def run_batch(
    ctx: RunContext, request: Request, questions: Iterable[str], emit: Callable[[str], bool]
) -> CommandResult:
    """One JSON envelope per question, in order, each with its own warnings and time, each
    printed (`emit`) as soon as it is answered: an agent may ask, read, and ask again. The
    batch ends with its input, or when no one reads the answers any more (emit says False)."""
    searcher = Searcher(ctx, request)
    answered = 0
    try:
        for question in questions:
            answered += 1
            line = _envelope(ctx, searcher, replace(request, query=question))
            if not emit(ctx.reporter.mask(line)):
                break
    finally:
        searcher.close()
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


def _envelope(ctx: RunContext, searcher: Searcher, request: Request) -> str:
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
        data = dict(answer(ctx, searcher, request))
        data["store_ms"] = ctx.store_ms - store_before  # kept here too, where 1 had it
    result = CommandResult(
        "recall", data, warnings=tuple(ctx.reporter.warnings[seen:]),
        guard_failures=ctx.reporter.guard_failures - failures, exit_code=code,
    )  # fmt: skip
    duration = int((time.monotonic() - started) * 1000)
    envelope = result.envelope(duration, ctx.store_ms - store_before)
    return json_printable(json.dumps(envelope, ensure_ascii=False))


def answer(ctx: RunContext, searcher: Searcher, request: Request) -> RecallData:
    s = ctx.settings
    pool = min(2 * request.limit, STORE_CANDIDATES_MAX)
    candidates: dict[str, Candidate] = {}
    sources: list[str] = []
    if "store" not in request.without and _from_store(ctx, request.query, pool, candidates):
        sources.append("agent-memory")
    if searcher.index is not None:
        stages = Stages(near="near" not in request.without, dates="dates" not in request.without)
        depth = max(LOCAL_CANDIDATES, pool)
        for hit in searcher.index.search(request.query, depth, s.now.date(), stages):
            _add_local(candidates, hit)
        sources.append("journals")

    _address(ctx, candidates.values())
    for c in candidates.values():
        c.fused += _store_share(c, index_answered=searcher.index is not None)
    kept = {k: c for k, c in candidates.items() if _wanted(c, request, s.now)}
    results = [_as_result(k, c) for k, c in sorted(kept.items(), key=lambda kc: -kc[1].fused)]
    rerank = bool(results) and "rerank" not in request.without
    rerank = rerank and ctx.reranking.wanted(opted_in=True)  # recall's always is
    reranked = ctx.reranking.results(request.query, results) if rerank else None
    # agent-memory's weighting (priority boost × vitality) is applied to a relevance score that
    # spreads (the reranker's); on fused ranks (1/61 vs 1/62) it would only sort by type.
    if reranked is not None:
        ranked = local_weighting(reranked, s.now, limit=request.limit)
    else:
        ranked = results[: request.limit]
    rows = [_row(kept[r.id], r) for r in ranked]
    if "agent-memory" not in sources and "store" not in request.without:
        ctx.reporter.warn(STORE_DOWN)
    return {
        "query": request.query, "results": rows, "sources": sources,
        "reranked": reranked is not None,
    }  # fmt: skip


def _from_store(ctx: RunContext, query: str, pool: int, candidates: dict[str, Candidate]) -> bool:
    """The store's own recall, ranked; False when it did not answer."""
    recalled = ctx.store.recall(query, pool)
    if recalled is None:
        return False
    for rank, memory in enumerate(recalled, start=1):
        _add_store(candidates, memory, rank)
    return True


def _address(ctx: RunContext, candidates: Iterable[Candidate]) -> None:
    """Give a stored memory the URI memfuse synced it to where the store's recall did not say
    (2.2 answers none, 3.x and later `null`): an agent can then `recall_path` it."""
    unnamed = {c.id: c for c in candidates if c.id and not c.uri}
    if not unnamed:
        return
    try:
        known = uris_of(ctx.workspace.state, unnamed)
    except (LedgerError, UnsafePath) as exc:
        ctx.reporter.warn(f"{exc}; recall's results carry only the store's own URIs")
        return
    for memory_id, uri in known.items():
        unnamed[memory_id].uri = uri


def _key(content: str) -> str:
    return fold_whitespace(content).casefold()


def _add_store(candidates: dict[str, Candidate], memory: StoredMemory, rank: int) -> None:
    if not memory.content:
        return
    c = candidates.setdefault(_key(memory.content), Candidate(memory.content, memory.type))
    c.store_rank = rank if c.store_rank is None else min(c.store_rank, rank)
    c.synced = c.synced or (memory.source or "").startswith(SOURCE_PREFIX)
    c.id = memory.id or c.id
    c.uri = memory.uri or c.uri
    c.vitality = memory.vitality if memory.vitality is not None else c.vitality
    c.updated_at = memory.updated_at or c.updated_at
    c.sources = (*c.sources, "store")


def _store_share(c: Candidate, *, index_answered: bool) -> float:
    """What the store's rank adds to a candidate's fused score (the module's docstring)."""
    if c.store_rank is None:
        return 0.0
    if not index_answered:
        return 1.0 / (RRF_K + c.store_rank)  # the store's order stands
    if "journal" in c.sources:
        return 0.0  # the local index ranked this text already
    synced = c.synced or (c.uri or "").startswith(JOURNAL_PREFIXES)
    weight = STORE_SYNCED_WEIGHT if synced else STORE_OWN_WEIGHT
    return weight / (RRF_K + c.store_rank)


def _add_local(candidates: dict[str, Candidate], hit: Hit) -> None:
    c = candidates.setdefault(_key(hit.content), Candidate(hit.content, hit.type))
    c.fused += LOCAL_WEIGHT / (RRF_K + hit.rank)
    c.location = c.location or hit.location
    c.date = c.date or hit.day
    if c.updated_at is None and hit.day:
        c.updated_at = datetime.fromisoformat(hit.day).astimezone()
    c.sources = (*c.sources, "journal")


def _wanted(c: Candidate, request: Request, now: datetime) -> bool:
    """The filters; a timeless fact (MEMORY.md's, with no day) passes the time filters."""
    if request.types and c.type not in request.types:
        return False
    if c.updated_at is None:
        return True
    if request.days is not None and (now - c.updated_at).total_seconds() > request.days * 86400:
        return False
    day = date.fromisoformat(c.date) if c.date else c.updated_at.date()
    if request.since is not None and day < request.since:
        return False
    return request.until is None or day <= request.until


def _as_result(key: str, c: Candidate) -> SearchResult:
    reason = "+".join(dict.fromkeys(c.sources)) or "local"
    return SearchResult(
        id=key, content=c.content, type=c.type, priority=priority_of(c.type),
        vitality=c.vitality, score=c.fused, updated_at=c.updated_at, match_reason=f"rrf:{reason}",
    )  # fmt: skip


def _row(c: Candidate, r: SearchResult) -> RecallRow:
    when = c.date or (c.updated_at.date().isoformat() if c.updated_at else None)
    return {
        "content": c.content,
        "score": round(r.score, 6),
        "reason": r.match_reason,
        "type": c.type,
        "id": c.id,
        "uri": c.uri,
        "location": c.location,
        "date": when,
    }
