"""Recall by meaning, fused with recall by words in a way that knows the question.

The installed model (memfuse.recall.semantic) embeds the question; the recall index gives the
bullets nearest it (memfuse.recall.index.RecallIndex.nearest). How much their order counts
beside the words' depends on the question (measured on LoCoMo's development split:
docs/recall-quality.md, decisions 224): a question that names people or things is answered by
the bullets holding those names, which words find and meaning blurs; a question about time is
answered through the journal's dates, which a sentence model does not see; a question with
neither is where meaning finds what words miss. So each name and a time lower meaning's weight,
down to a floor, and every bullet meaning finds adds its reciprocal rank at that weight — the
same fusion the words' ranks take part in (memfuse.recall.engine).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

from memfuse.recall.dates import query_tokens
from memfuse.recall.index import Hit, RecallIndex
from memfuse.recall.semantic import Embedder

RRF_K = 60
WEIGHT = 0.5  # meaning's weight for a question with no name and no time in it
PER_NAME = 0.1  # taken off for each name the question holds
TIME = 0.2  # taken off when it asks about time
FLOOR = 0.1
NAMES_COUNTED = 3
# A name: a capitalised word that does not start the question and is no question word.
_WORD = re.compile(r"[A-Z][\w'’-]*|[\w'’-]+")
_QUESTION_WORDS = frozenset((
    "what", "when", "where", "who", "whom", "whose", "which", "why", "how", "did", "does", "do",
    "is", "are", "was", "were", "would", "could", "should", "can", "has", "have", "had", "will",
    "in", "on", "at", "i",
))  # fmt: skip
_TIME = re.compile(
    r"\b(when|how long|how often|what (?:year|month|day|date|time)|which (?:year|month|day)"
    r"|before|after|since|until|ago|first|last)\b|什么时候|哪天|哪一天|多久|几月|几号|何时",
    re.IGNORECASE,
)


def names_in(question: str) -> int:
    """How many distinct names a question holds (capitalised words past its first)."""
    words = _WORD.findall(question)
    found = {
        w.rstrip("'’s") for n, w in enumerate(words)
        if n and w[:1].isupper() and w.casefold() not in _QUESTION_WORDS
    }  # fmt: skip
    return len(found)


def asks_about_time(question: str, today: date) -> bool:
    return bool(_TIME.search(question)) or bool(query_tokens(question, today))


def weight(question: str, today: date) -> float:
    """How much meaning's ranks count for this question, against the words' 1."""
    w = WEIGHT - PER_NAME * min(names_in(question), NAMES_COUNTED)
    if asks_about_time(question, today):
        w -= TIME
    return max(FLOOR, w)


def by_meaning(
    index: RecallIndex,
    embedder: Embedder,
    question: str,
    today: date,
    limit: int,
    warn: Callable[[str], None],
) -> list[tuple[Hit, float]]:
    """The bullets nearest the question, each with its share of the fusion; none when the
    index holds no vectors of this model's yet, or the model failed (one warning)."""
    try:
        vector = embedder.embed([question], question=True)
    except Exception as exc:  # the model's own failure, whatever it is
        warn(f"recall by meaning is off this time: the model {embedder.name} failed ({exc})")
        return []
    hits = index.nearest(vector[0], limit, embedder.name)
    share = weight(question, today)
    return [(hit, share / (RRF_K + hit.rank)) for hit in hits]
