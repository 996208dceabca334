"""Recall by meaning, fused with recall by words into the local index's one order.

How the two are scored and ordered, and the knobs measured: docs/recall-quality.md ("Recall by
meaning"). Scores and not ranks: a rank says nothing of how far ahead the words' first is; each
side taken over its own best means the same over a week of journals as over ten years.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from memfuse.recall.index import Hit, RecallIndex
from memfuse.recall.semantic import Embedder
from memfuse.recall.terms import full_match, has_cjk, query_terms

DEPTH = 50  # bullets closest to the question that take part (100 changed no top 20)
WEIGHT = 0.5  # what the closest bullet adds past the first, where the words' best has 1
FIRST_WEIGHT = 0.2  # … and in choosing the first
DAY_WEIGHT = 0.2  # what the day of the best candidates adds
DAY_BEST = 3  # a day is scored by its best three candidates
# Meaning is trusted (CONFIDENT) where the words' best scores under LITTLE of a full match
# (terms.full_match): for the rest where the closest stands CLEAR (in spreads of cosines) above
# the next; for the first where the cosine's own best does, CLEAR scaled by the words' share.
LITTLE = 0.3
CLEAR = 0.75
CONFIDENT = 2.0

FoundBy = tuple[
    Hit, tuple[str, ...]
]  # a candidate, with what found it: "journal" (words), "meaning"


def by_words(words: list[Hit]) -> list[FoundBy]:
    return [(hit, ("journal",)) for hit in words]


def with_meaning(
    index: RecallIndex,
    embedder: Embedder,
    question: str,
    words: list[Hit],
    warn: Callable[[str], None],
) -> list[FoundBy]:
    """The words' candidates and the closest by meaning, in the fused order, ranked from 1;
    the words' alone when the index holds none of this model's vectors, or it failed."""
    try:
        vector = embedder.embed([question], question=True)
    except Exception as exc:  # the model's own failure, whatever it is
        warn(f"recall by meaning is off this time: the model {embedder.name} failed ({exc})")
        return by_words(words)
    near, close_of = index.closest(vector[0], DEPTH, embedder.name, also=[h.id for h in words])
    if not near:
        return by_words(words)
    best_words = max((h.score for h in words), default=0.0)
    full = full_match_in(index, question)
    top = max(best_words, full if has_cjk(question) else 0.0) or 1.0
    closest = near[0].score if near[0].score > 0 else 1.0
    clear = len(near) < 2 or near[0].score - near[1].score >= CLEAR
    little = best_words < LITTLE * full
    weight = CONFIDENT if clear and little else WEIGHT
    share = {h.id: max(h.score, 0.0) / top for h in words}
    hits = {h.id: h for h in words}
    found = {h.id: ("journal",) for h in words}
    for h in near:
        close_of.setdefault(h.id, h.score)
        hits.setdefault(h.id, h)
    close: dict[int, float] = {}
    for i, c in close_of.items():
        if c > 0:  # not above the question's median: not close
            close[i] = c / closest
            found[i] = (*found.get(i, ()), "meaning")
    candidates = list(dict.fromkeys([*share, *close]))  # the words' order first: ties keep it
    if not candidates:
        return []
    score = {i: share.get(i, 0.0) + weight * close.get(i, 0.0) for i in candidates}
    first_weight, first_close = FIRST_WEIGHT, close
    if little:  # the first by the cosine alone, the clearer the less the words found (890)
        lead, alone = index.closest(vector[0], 2, embedder.name, also=candidates, alone=True)
        margin = lead[0].score - lead[1].score if len(lead) == 2 else CLEAR
        top_alone = max(alone.values(), default=0.0)
        if margin * LITTLE * full >= CLEAR * best_words and top_alone > 0:
            first_weight = CONFIDENT
            first_close = {i: max(s, 0.0) / top_alone for i, s in alone.items()}
    score = with_day(score, {i: hits[i].day or hits[i].location for i in candidates})
    # a bullet of a day the question names (RecallIndex.search) stays ahead, as in the words'
    first = max(candidates, key=lambda i: (hits[i].dated, share.get(i, 0.0) + first_weight *
                                           first_close.get(i, 0.0)))  # fmt: skip
    rest = sorted(candidates, key=lambda i: (not hits[i].dated, -score[i]))
    order = [first, *(i for i in rest if i != first)]
    return [
        (replace(hits[i], rank=rank, score=score[i]), found[i])
        for rank, i in enumerate(order, start=1)
    ]


def with_day(score: Mapping[int, float], day_of: Mapping[int, str]) -> dict[int, float]:
    """Each candidate's score plus DAY_WEIGHT × its day's (the sum of the day's DAY_BEST best
    scores) over the best day's; a fact without a day is a day of its own."""
    by_day: dict[str, list[float]] = {}
    for i, s in score.items():
        by_day.setdefault(day_of[i], []).append(s)
    days = {d: sum(sorted(v, reverse=True)[:DAY_BEST]) for d, v in by_day.items()}
    best = max(days.values(), default=0.0)
    if best <= 0:
        return dict(score)
    return {i: s + DAY_WEIGHT * days[day_of[i]] / best for i, s in score.items()}


def full_match_in(index: RecallIndex, question: str) -> float:
    """What a bullet holding every term of the question would score in this index (the rows
    that hold each term, out of all): reads of the index's counts, not of its rows."""
    terms = query_terms(question)
    if not terms:
        return 0.0
    rows = index.held(terms)
    # the rows of the index, from its files' counts: a few thousand rows, where counting the
    # rows themselves reads 146 000 over ten years (benchmarks/recall_fusion_cost.py)
    (total,) = index.db.execute("SELECT coalesce(sum(rows), 0) FROM files").fetchone()
    return full_match(terms, rows, int(total))
