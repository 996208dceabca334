"""One question's answer, in the shape `memfuse recall --json` and serve's `recall` tool show
(memfuse.run.results names it RecallData among the other commands' data)."""

from typing import TypedDict


class AnswerRow(TypedDict):
    """One result, best first."""

    content: str
    score: float
    reason: str
    type: str
    id: str | None
    uri: str | None
    location: str | None
    date: str | None


class RecallAnswer(TypedDict):
    query: str
    results: list[AnswerRow]
    sources: list[str]
    reranked: bool
