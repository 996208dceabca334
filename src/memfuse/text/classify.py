"""The keyword classifier: knowledge > emotion > event, its words the lexicon shipped beside it
(lexicon.txt). CJK keywords match as substrings; Latin ones as whole words, any case (`miss`
never fires inside `mission`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

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
    """One expression, longest keywords first, grouped by their word edges (fast to compile)."""
    edge = "(?<![A-Za-z0-9_])", "(?![A-Za-z0-9_])"
    groups: dict[tuple[bool, bool], list[str]] = {}
    for keyword in sorted(set(keywords), key=len, reverse=True):
        latin = keyword.isascii()
        ends = (latin and keyword[0].isalnum(), latin and keyword[-1].isalnum())
        groups.setdefault(ends, []).append(re.escape(keyword))
    parts = [
        f"{edge[0] if before else ''}(?:{'|'.join(words)}){edge[1] if after else ''}"
        for (before, after), words in groups.items()
    ]
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def lexicon() -> dict[str, tuple[str, ...]]:
    """lexicon.txt's sections: their words, in the file's order."""
    sections: dict[str, list[str]] = {}
    words: list[str] = []
    text = resources.files(__package__).joinpath("lexicon.txt").read_text("utf-8")
    for line in (raw.split("#", 1)[0].strip() for raw in text.splitlines()):
        if line.startswith("["):
            words = sections.setdefault(line.strip("[]"), [])
        elif line:
            words += [w.strip() for w in line.split(",") if w.strip()]
    return {name: tuple(found) for name, found in sections.items()}


LEXICON = lexicon()


class Classifier:
    def __init__(
        self,
        knowledge: Iterable[str],
        emotion: Iterable[str],
        not_emotion: Iterable[str] = LEXICON["not emotion"],
    ) -> None:
        self._rules = [(KNOWLEDGE, _pattern(knowledge)), (EMOTION, _pattern(emotion))]
        self._not_emotion = _pattern(not_emotion)

    def classify(self, text: str) -> Verdict:
        """The first class (in precedence order) with a keyword in the text, and that keyword
        as written where it first occurs; an emotion's not inside a [not emotion] phrase."""
        for memory_type, pattern in self._rules:
            if memory_type == EMOTION and self._not_emotion is not None:
                text = self._not_emotion.sub(lambda m: " " * len(m.group(0)), text)
            match = pattern.search(text) if pattern is not None else None
            if match is not None:
                return Verdict(memory_type, match.group(0))
        return Verdict(EVENT, None)
