"""The words recall matches on: for a bullet, and for a question.

Latin words are case-folded, stripped of the usual English function words and Snowball-stemmed;
Chinese (Japanese, Korean) is matched by characters and their adjacent pairs, so it needs no
segmenter, less the function characters that would match nearly every bullet. What each earns:
docs/recall-quality.md. What a question costs is bounded (`bounded`).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Mapping

# A question's cost: what FTS5 is asked at most.
TERMS_MAX = 32  # distinct terms of one question
POSTINGS_MAX = 100_000  # rows its terms hold between them (the rarest one is kept whatever)

_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")

# The usual English function words (the 179 of NLTK's list, apostrophe fragments included).
STOP_EN = frozenset(
    """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
her hers herself it its itself they them their theirs themselves what which who whom this that
these those am is are was were be been being have has had having do does did doing a an the and
but if or because as until while of at by for with about against between into through during
before after above below to from up down in out on off over under again further then once here
there when where why how all any both each few more most other some such no nor not only own
same so than too very s t can will just don should now d ll m o re ve y ain aren couldn didn
doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
""".split()  # noqa: SIM905 - a word list reads best as words
)
# What questions are made of, beyond those: dropped from a question only.
STOP_QUESTION = frozenset(
    """
would could might may also get got go going did does ever kind type sort many much one ones
thing things something anything someone anyone like likely
""".split()  # noqa: SIM905 - a word list reads best as words
)
# Chinese function characters and words, as characters and pairs (what the CJK terms are).
STOP_ZH = frozenset(
    """
的 了 是 在 和 与 及 或 也 都 就 还 又 把 被 给 对 从 向 吗 呢 吧 啊
呀 么 着 过 地 得 之 这 那 个 我 你 他 她 它 们 有 没 嘛 哦 啦 什么
怎么 怎样 如何 哪里 哪个 哪些 为什 为何 我们 你们 他们 她们 它们 这个 那个
这些 那些 一个 是否 是不 不是 有没 没有 就是 还是 或者 以及 因为 所以 但是
而且 可以 已经 的话 时候 什么时 一下
""".split()  # noqa: SIM905 - a word list reads best as words
)


@functools.cache
def _stemmer() -> object:
    import snowballstemmer  # type: ignore[import-untyped]  # loaded by the runs that search

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


def _terms(text: str, stop: frozenset[str]) -> list[str]:
    lowered = text.casefold().replace("\u2019", "'")
    found = [stem(w) for w in _WORD.findall(lowered) if w not in stop]
    if not _CJK.search(lowered):
        return found  # the usual bullet: no character to look at one by one
    found += [c for c in lowered if _CJK.match(c) and c not in STOP_ZH]
    found += [
        a + b
        for a, b in itertools.pairwise(lowered)
        if _CJK.match(a) and _CJK.match(b) and a + b not in STOP_ZH
    ]
    return found


def doc_terms(text: str) -> list[str]:
    """A bullet's (or a MEMORY.md fact's) terms."""
    return _terms(text, STOP_EN)


def query_terms(text: str) -> list[str]:
    """A question's terms; all its words when it is made of nothing but function words."""
    found = _terms(text, STOP_EN | STOP_QUESTION)
    if found:
        return found
    lowered = text.casefold()
    return [stem(w) for w in _WORD.findall(lowered)] + [c for c in lowered if _CJK.match(c)]


def bounded(terms: list[str], rows: Mapping[str, int]) -> list[str]:
    """The terms of a question worth asking the index for, rarest first (`rows`: how many
    rows of the index hold each term): FTS5 ranks every row that holds one of them. The
    rarest is kept whatever it holds: a question of common words still gets an answer."""
    held = sorted((t for t in dict.fromkeys(terms) if rows.get(t, 0) > 0), key=lambda t: rows[t])
    kept: list[str] = []
    spent = 0
    for term in held:
        if len(kept) == TERMS_MAX or (kept and spent + rows[term] > POSTINGS_MAX):
            break
        kept.append(term)
        spent += rows[term]
    return kept


def has_cjk(text: str) -> bool:
    """Whether a text holds a Chinese, Japanese or Korean character (matched one by one)."""
    return _CJK.search(text) is not None


def full_match(terms: list[str], rows: Mapping[str, int], total: int) -> float:
    """What a bullet that held each of a question's terms once would score, at the index's
    average length, by FTS5's BM25 in its own column: the sum of the terms' IDFs (FTS5's), a
    term no row holds counting as the rarest."""
    score = 0.0
    for term in dict.fromkeys(terms):
        # the counts and the total are two reads: a refresh between them may leave a term
        # holding more rows than the total says there are (the log's domain ends there)
        held = min(rows.get(term, 0), total)
        score += max(math.log((total - held + 0.5) / (held + 0.5)), 1e-6)
    return score
