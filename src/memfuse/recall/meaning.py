"""Recall by meaning, fused with recall by words into the local index's one order.

The installed model (memfuse.recall.semantic) embeds the question, and the recall index gives
each bullet its closeness to it (memfuse.recall.semantic.closeness: its cosine and its closer
neighbour's, above the question's median, over their spread). The local candidates — the
words' best (memfuse.recall.index.RecallIndex.search) and the DEPTH closest by meaning — are
ordered by one score: the bullet's BM25 over the question's best BM25 (1 for the words' first,
0 for a bullet words did not find) plus WEIGHT × its closeness over the question's greatest
closeness (0.5 for the closest). That order is the local index's ranking, which the engine
fuses with the store's (memfuse.recall.engine).

Why scores and not ranks (measured on LoCoMo's development split and the bilingual example
set: docs/recall-quality.md, decisions 331): a rank says nothing of how far ahead the words'
first is. Where the words find the bullet that holds a question's name with a BM25 far above
the rest, a bullet close in meaning does not pass it; where they find nothing, or only
bullets that share a character or two with the question, the closeness orders what they left.
Each side is taken over its own best, so the fusion means the same over a week of journals
as over ten years.
"""

from __future__ import annotations

from collections.abc import Callable

from memfuse.recall.index import Hit, RecallIndex
from memfuse.recall.semantic import Embedder

DEPTH = 50  # bullets closest to the question that take part (100 changed no top 20: decisions 331)
WEIGHT = 0.5  # what the closest bullet adds, where the words' best has 1

Found = tuple[Hit, tuple[str, ...]]  # a candidate, with what found it: "journal" (words), "meaning"


def by_words(words: list[Hit]) -> list[Found]:
    return [(hit, ("journal",)) for hit in words]


def with_meaning(
    index: RecallIndex,
    embedder: Embedder,
    question: str,
    words: list[Hit],
    warn: Callable[[str], None],
) -> list[Found]:
    """The words' candidates and the closest by meaning, in the fused order, ranked from 1;
    the words' alone when the index holds no vectors of this model's yet, or the model failed
    (one warning)."""
    try:
        vector = embedder.embed([question], question=True)
    except Exception as exc:  # the model's own failure, whatever it is
        warn(f"recall by meaning is off this time: the model {embedder.name} failed ({exc})")
        return by_words(words)
    near, close_of = index.closest(vector[0], DEPTH, embedder.name, also=[h.id for h in words])
    if not near:
        return by_words(words)
    top = max((h.score for h in words), default=0.0)
    top = top if top > 0 else 1.0
    closest = near[0].score if near[0].score > 0 else 1.0
    score = {h.id: max(h.score, 0.0) / top for h in words}
    hits = {h.id: h for h in words}
    found = {h.id: ("journal",) for h in words}
    for h in near:
        close_of.setdefault(h.id, h.score)
        hits.setdefault(h.id, h)
    for i, close in close_of.items():
        if close <= 0:
            continue  # not above the question's median: not close
        score[i] = score.get(i, 0.0) + WEIGHT * close / closest
        found[i] = (*found.get(i, ()), "meaning")
    order = sorted(score, key=lambda i: -score[i])  # stable: ties keep the words' order
    ranked: list[Found] = []
    for rank, i in enumerate(order, start=1):
        h = hits[i]
        ranked.append((Hit(h.location, h.content, h.type, h.day, rank, score[i], i), found[i]))
    return ranked
