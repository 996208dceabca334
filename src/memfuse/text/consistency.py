"""Is a store memory the same statement as a MEMORY.md fact, the same one changed, or only
related? Pure: tidy's consistency check (`check`) and its verdict rule (`changed_slot`).

A *conflict* is the same statement with one slot changed: a negation on one side only, an
opposite word (dark/light, 喜欢/讨厌), a different number or date, or a different name in the
same place. Statements that are merely about the same thing are *related*.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

from memfuse.text.similarity import dice, fold_whitespace, profile

_TOKEN = re.compile(r"[A-Za-z]+(?:'[a-z]+)?|\d+(?:[.:/-]\d+)*|[\u3400-\u9fff]|[^\s\w]", re.UNICODE)
_NUMBER = re.compile(r"\d+(?:[.:/-]\d+)*")
NEGATIONS = frozenset({
    "not", "no", "never", "don't", "doesn't", "isn't", "won't", "can't", "cannot", "without",
    "不", "没", "别", "非", "无", "未",
})  # fmt: skip
ANTONYMS = (
    ("dark", "light"), ("like", "dislike"), ("likes", "dislikes"), ("love", "hate"),
    ("loves", "hates"), ("enable", "disable"), ("enabled", "disabled"), ("on", "off"),
    ("yes", "no"), ("true", "false"), ("always", "never"), ("short", "long"),
    ("brief", "detailed"), ("early", "late"), ("before", "after"), ("more", "less"),
    ("allow", "forbid"), ("allowed", "forbidden"), ("prefer", "avoid"), ("prefers", "avoids"),
    ("喜欢", "讨厌"), ("喜欢", "不喜欢"), ("简短", "详细"), ("早", "晚"), ("开", "关"),
    ("允许", "禁止"), ("必须", "不必"), ("深色", "浅色"), ("多", "少"), ("前", "后"),
)  # fmt: skip
_OPPOSITE = {frozenset(pair) for pair in ANTONYMS}
SAME_STATEMENT = 0.6  # share of the shorter side's tokens both say, for "the same statement"


def tokens(text: str) -> list[str]:
    return [t.casefold() for t in _TOKEN.findall(text)]


def _joined(parts: list[str]) -> str:
    """A diff segment as one word: CJK characters run together, Latin words spaced."""
    out = ""
    for part in parts:
        if out and (part[0].isascii() and out[-1].isascii()):
            out += " "
        out += part
    return out


def changed_slot(a: str, b: str) -> str | None:
    """Why `a` and `b` read as the same statement with a slot changed, or None."""
    left, right = tokens(a), tokens(b)
    matcher = SequenceMatcher(a=left, b=right, autojunk=False)
    shared = sum(block.size for block in matcher.get_matching_blocks())
    if not left or not right or shared / min(len(left), len(right)) < SAME_STATEMENT:
        return None  # a prefix on one side ("重要的事：") does not make it another statement
    numbers_a, numbers_b = set(_NUMBER.findall(a)), set(_NUMBER.findall(b))
    if numbers_a and numbers_b and numbers_a != numbers_b:
        return "a different number or date"
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        gone, came = left[i1:i2], right[j1:j2]
        if NEGATIONS & set(gone) ^ NEGATIONS & set(came):
            return "a negation on one side only"
        if op == "replace":
            pair = frozenset({_joined(gone), _joined(came)})
            if pair in _OPPOSITE or any(frozenset({g, c}) in _OPPOSITE for g in gone for c in came):
                return "an opposite word"
            names_a = [t for t in _TOKEN.findall(a) if t.casefold() in gone and t[:1].isupper()]
            names_b = [t for t in _TOKEN.findall(b) if t.casefold() in came and t[:1].isupper()]
            if names_a and names_b:
                return "a different name"
    return None


@dataclass(frozen=True)
class Finding:
    memory: str
    memory_id: str | None
    line: str | None
    line_no: int | None
    similarity: float
    verdict: str  # consistent | conflict | related | not-in-memory-md
    why: str | None = None  # for a conflict: what changed (memfuse.text.consistency)


def closeness(a: str, b: str) -> float:
    """How much two statements say the same: Dice similarity, or how fully the shorter one
    is contained in the longer (a MEMORY.md line often says more than the memory)."""
    left, right = profile(fold_whitespace(a)), profile(fold_whitespace(b))
    smaller = min(left.total(), right.total())
    contained = (left & right).total() / smaller if smaller else 0.0
    return max(dice(left, right), contained)


class Statement(Protocol):
    """A memory as the check reads it: its text, and its id when the store gave one."""

    @property
    def content(self) -> str: ...

    @property
    def id(self) -> str | None: ...


def check(
    memories: Sequence[Statement],
    facts: Sequence[tuple[int, str]],
    consistent: float,
    related: float,
) -> list[Finding]:
    """Each memory against its closest fact (MEMORY.md's content lines, with their numbers)."""
    findings = []
    for memory in memories:
        text = memory.content
        scored = [(closeness(text, fact), number, fact) for number, fact in facts]
        score, number, fact = max(scored, default=(0.0, None, None))
        why = None
        if score >= related and fact is not None:
            # A changed slot is a conflict however similar the rest: "prefers dark mode" and
            # "prefers light mode" share nearly every character.
            why = changed_slot(text, fact)
            verdict = "conflict" if why else "consistent" if score >= consistent else "related"
        else:
            verdict, number, fact = "not-in-memory-md", None, None
        findings.append(Finding(text, memory.id, fact, number, score, verdict, why))
    return findings
