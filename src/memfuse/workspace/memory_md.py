"""MEMORY.md read as facts: its content lines, list marks stripped (tidy's check, recall)."""

from __future__ import annotations

import re

_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def memory_md_facts(text: str) -> list[tuple[int, str]]:
    """MEMORY.md's content lines (list marks stripped), with their line numbers."""
    facts = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = _LIST_MARK.sub("", line).strip()
        if stripped and not stripped.startswith(("#", "<!--", "```", "|---")):
            facts.append((number, stripped))
    return facts
