"""One question's answer, in the shape `memfuse recall --json` and serve's `recall` tool show
(memfuse.run.results names it RecallData among the other commands' data)."""

from typing import TypedDict


class Row(TypedDict):
    """One result, best first."""

    content: str
    score: float
    reason: str
    type: str
    id: str | None
    uri: str | None
    location: str | None
    date: str | None


class Answer(TypedDict):
    query: str
    results: list[Row]
    sources: list[str]
    reranked: bool
