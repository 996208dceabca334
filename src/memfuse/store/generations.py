"""Telling agent-memory's generations apart, and reading what each one answers.

Facts in reference/agent-memory-versions.md. `serverInfo.version` is stale in every release, so
the generation comes from the tool list. From 3.x on `reflect` answers Markdown: 3.x prose in
Chinese ending in a totals line, 4.x/5.x a `### phase` heading and a JSON object per phase.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

# The first tool each generation added, newest first.
MARKERS = ((5, "archive"), (4, "reindex"), (3, "ingest"), (3, "surface"))
PHASES = ("decay", "tidy", "govern")
_HEADING = re.compile(r"^###\s+(decay|tidy|govern)\s*$", re.MULTILINE)
_TOTALS = re.compile(r"记忆总数[：:]\s*(\d+)\s*→\s*(\d+)")


def generation_of(tools: Iterable[str]) -> int:
    """2, 3, 4 or 5 from the names of the tools the server offers."""
    offered = set(tools)
    return next((gen for gen, tool in MARKERS if tool in offered), 2)


def reflect_counts(text: str) -> dict[str, Any] | None:
    """The per-phase counts of a 4.x/5.x reflect answer, in 2.2's `{phase: {key: n}}` shape;
    None when the text has no phase with a JSON object (3.x's prose, or something else)."""
    decoder = json.JSONDecoder()
    found: dict[str, Any] = {}
    for heading in _HEADING.finditer(text):
        rest = text[heading.end() :].lstrip()
        try:
            value, _end = decoder.raw_decode(rest)
        except ValueError:
            continue
        if isinstance(value, dict):
            found[heading.group(1)] = value
    return found or None


def reflect_totals(text: str) -> dict[str, int] | None:
    """The memory count before and after, from the summary line 3.x–5.x end reflect with."""
    match = _TOTALS.search(text)
    if match is None:
        return None
    return {"before": int(match.group(1)), "after": int(match.group(2))}
