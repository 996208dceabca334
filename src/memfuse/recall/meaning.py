"""Recall by meaning, fused with recall by words in a way that knows the question.

The installed model (memfuse.recall.semantic) embeds the question; the recall index gives the
DEPTH bullets nearest it (memfuse.recall.index.RecallIndex.nearest). Each adds its cosine to
the fusion, at a weight that depends on the question (measured on LoCoMo's development split
and the bilingual example set: docs/recall-quality.md, decisions 224). A question that names
someone or something is answered by the bullets that hold the name, which words find and a
sentence model blurs: there meaning orders only what the words leave tied or did not find
(NAMED: a cosine of 0.5 × 0.02 / 60 is less than the step between the words' first ranks). A
question without a name (a paraphrase, a Chinese question, "what did I worry about") is where
meaning finds what words miss: there a close bullet counts as much as the words' best
(UNNAMED: a cosine of 0.5 × 2 / 60 is the share of the words' first rank, 1 / 61).
Asking about time was measured as a third signal and changed nothing with this model: the
journal's dates are the words' stage (memfuse.recall.dates), which meaning leaves alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memfuse.recall.index import Hit, RecallIndex
from memfuse.recall.semantic import Embedder

RRF_K = 60
DEPTH = 100  # bullets nearest the question that take part
UNNAMED = 2.0  # meaning's weight for a question that names no one and nothing
NAMED = 0.02  # … and for one that does: below the gap between the words' first two ranks
# A name: a capitalised word that does not start the question and is no question word.
_WORD = re.compile(r"[A-Z][\w'’-]*|[\w'’-]+")
_QUESTION_WORDS = frozenset((
    "what", "when", "where", "who", "whom", "whose", "which", "why", "how", "did", "does", "do",
    "is", "are", "was", "were", "would", "could", "should", "can", "has", "have", "had", "will",
    "in", "on", "at", "i",
))  # fmt: skip


def names_in(question: str) -> int:
    """How many distinct names a question holds (capitalised words past its first)."""
    words = _WORD.findall(question)
    found = {
        w.rstrip("'’s") for n, w in enumerate(words)
        if n and w[:1].isupper() and w.casefold() not in _QUESTION_WORDS
    }  # fmt: skip
    return len(found)


def weight(question: str) -> float:
    """How much a cosine counts in the fusion for this question (the module's docstring)."""
    return NAMED if names_in(question) else UNNAMED


def by_meaning(
    index: RecallIndex,
    embedder: Embedder,
    question: str,
    warn: Callable[[str], None],
) -> list[tuple[Hit, float]]:
    """The DEPTH bullets nearest the question, each with its share of the fusion; none when
    the index holds no vectors of this model's yet, or the model failed (one warning)."""
    try:
        vector = embedder.embed([question], question=True)
    except Exception as exc:  # the model's own failure, whatever it is
        warn(f"recall by meaning is off this time: the model {embedder.name} failed ({exc})")
        return []
    hits = index.nearest(vector[0], DEPTH, embedder.name)
    share = weight(question) / RRF_K
    return [(hit, share * max(0.0, hit.score)) for hit in hits]
