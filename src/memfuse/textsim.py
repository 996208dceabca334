"""Text similarity that works on CJK and Latin alike: Dice over character bigrams of the
whitespace-folded, case-folded text. Used for dedup (surface) and MEMORY.md checks (tidy)."""

from __future__ import annotations

import re
from collections import Counter

_SPACE = re.compile(r"\s+")


def fold_whitespace(text: str) -> str:
    """All runs of whitespace (newlines included) become one space; ends trimmed."""
    return _SPACE.sub(" ", text).strip()


def _bigrams(text: str) -> Counter[str]:
    folded = _SPACE.sub("", text).casefold()
    if len(folded) < 2:
        return Counter([folded]) if folded else Counter()
    return Counter(folded[i : i + 2] for i in range(len(folded) - 1))


def similarity(a: str, b: str) -> float:
    """1.0 for texts equal up to whitespace and case, 0.0 for nothing in common."""
    left, right = _bigrams(a), _bigrams(b)
    total = sum(left.values()) + sum(right.values())
    if total == 0:
        return 1.0 if not a.strip() and not b.strip() else 0.0
    return 2 * sum((left & right).values()) / total
