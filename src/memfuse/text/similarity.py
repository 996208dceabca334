"""Text similarity that works on CJK and Latin alike: Dice over character bigrams of the
whitespace-folded, case-folded text. Used for dedup (surface) and MEMORY.md checks (tidy)."""

from __future__ import annotations

import itertools
import re
from collections import Counter

_SPACE = re.compile(r"\s+")


def fold_whitespace(text: str) -> str:
    """All runs of whitespace (newlines included) become one space; ends trimmed."""
    return _SPACE.sub(" ", text).strip()


def profile(text: str) -> Counter[str]:
    """The bigram profile of a text; compute once when comparing one text many times."""
    folded = _SPACE.sub("", text).casefold()
    if len(folded) < 2:
        return Counter([folded]) if folded else Counter()
    return Counter(folded[i : i + 2] for i in range(len(folded) - 1))


def dice(left: Counter[str], right: Counter[str]) -> float:
    """Similarity of two profiles (see `similarity`)."""
    total = left.total() + right.total()
    if total == 0:
        return 1.0
    return 2 * (left & right).total() / total


def similarity(a: str, b: str) -> float:
    """1.0 for texts equal up to whitespace and case, 0.0 for nothing in common."""
    return dice(profile(a), profile(b))


_WORD = re.compile(r"[a-z0-9]+")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def search_terms(text: str) -> list[str]:
    """Latin words and digits, plus CJK characters and CJK bigrams: enough for BM25 on both
    without a segmenter (the reference server's index and memfuse's recall index)."""
    lowered = text.casefold()
    found = _WORD.findall(lowered)
    found += [c for c in lowered if CJK.match(c)]
    found += [a + b for a, b in itertools.pairwise(lowered) if CJK.match(a) and CJK.match(b)]
    return found
