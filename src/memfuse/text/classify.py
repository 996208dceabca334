"""The keyword classifier (SPEC §4): knowledge > emotion > event. Pure.

CJK keywords match as substrings. Latin keywords match whole words, case-insensitively, so
`miss` never fires inside `mission` and `must` never inside `mustard`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

KNOWLEDGE = "knowledge"
EMOTION = "emotion"
EVENT = "event"


@dataclass(frozen=True)
class Verdict:
    type: str
    keyword: str | None  # the keyword that decided it; None for the event default

    def explain(self) -> str:
        return (
            f"{self.type} (keyword {self.keyword!r})"
            if self.keyword
            else f"{self.type} (no keyword)"
        )


def _pattern(keywords: Iterable[str]) -> re.Pattern[str] | None:
    parts = []
    for keyword in sorted(set(keywords), key=len, reverse=True):
        escaped = re.escape(keyword)
        if keyword.isascii():
            parts.append(rf"(?<![A-Za-z0-9_]){escaped}(?![A-Za-z0-9_])")
        else:
            parts.append(escaped)
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


class Classifier:
    def __init__(self, knowledge: Iterable[str], emotion: Iterable[str]) -> None:
        self._rules = [(KNOWLEDGE, _pattern(knowledge)), (EMOTION, _pattern(emotion))]

    def classify(self, text: str) -> Verdict:
        """The first class (in precedence order) with a keyword in the text, and that keyword
        as written where it first occurs."""
        for memory_type, pattern in self._rules:
            match = pattern.search(text) if pattern is not None else None
            if match is not None:
                return Verdict(memory_type, match.group(0))
        return Verdict(EVENT, None)
