"""RECENT.md: normalised records → ranked, deduplicated, budgeted Markdown. Pure.

The file is loaded into every session, so its budgets are hard: at most `max_lines` lines,
one line per entry, each entry's text at most `entry_chars` characters (not bytes).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from memfuse.settings import Budget
from memfuse.store.decay import priority_of, vitality
from memfuse.text.hidden import escaped
from memfuse.text.similarity import dice, fold_whitespace, profile
from memfuse.workspace.blocks import PIECE, token_chunks
from memfuse.workspace.journal import read
from memfuse.workspace.memory_md import WHOLE

ELLIPSIS = "…"
SECTIONS = (
    ("emotion", "最近情感", ("emotion",)),
    ("knowledge", "最近决策/知识", ("knowledge", "identity")),
    ("event", "最近事件", ("event",)),
)


@dataclass(frozen=True)
class Record:
    """A memory as surface sees it, whatever call it came from."""

    content: str
    type: str
    id: str | None = None
    uri: str | None = None
    vitality: float | None = None  # None until estimated
    when: datetime | None = None  # None: timeless
    estimated: bool = False


def estimate(record: Record, now: datetime, timeless_age_days: float) -> Record:
    """Fill in a missing vitality with agent-memory's own decay model, from type and age."""
    if record.vitality is not None:
        return record
    age = (now - record.when).total_seconds() / 86400 if record.when else timeless_age_days
    return replace(record, vitality=vitality(priority_of(record.type), age), estimated=True)


def in_window(record: Record, now: datetime, window_days: int) -> bool:
    if record.when is None:
        return True  # timeless knowledge
    return now - timedelta(days=window_days) <= record.when <= now + timedelta(days=1)


def _rank_key(record: Record) -> tuple[float, float]:
    when = record.when.timestamp() if record.when else float("-inf")
    return (-(record.vitality or 0.0), -when)


def dedupe(records: Iterable[Record], threshold: float) -> list[Record]:
    """Drop copies (same id, same URI, or text similarity ≥ threshold), keeping the
    higher-vitality one and any date or URI the other copy knew."""
    kept: list[Record] = []
    profiles: list[Counter[str]] = []
    for record in sorted(records, key=_rank_key):
        mine = profile(fold_whitespace(record.content))
        twin = None
        for index, other in enumerate(kept):
            if (
                (record.id and record.id == other.id)
                or (record.uri and record.uri == other.uri)
                or dice(mine, profiles[index]) >= threshold
            ):
                twin = index
                break
        if twin is None:
            kept.append(record)
            profiles.append(mine)
        else:
            other = kept[twin]
            kept[twin] = replace(
                other, when=other.when or record.when, uri=other.uri or record.uri,
                id=other.id or record.id,
            )  # fmt: skip
    return kept


# Of each section, the best this many times its cap are compared for duplicates: enough that
# copies cannot crowd out what would be shown, few enough that thousands cost only a sort.
CANDIDATES_PER_ENTRY = 4
CANDIDATES_MIN = 40


def choose(records: Iterable[Record], now: datetime, budget: Budget) -> dict[str, list[Record]]:
    """Window, estimate, dedup, rank and cap: the entries of each section, best first."""
    candidates = [
        estimate(r, now, budget.window_days)
        for r in records
        if r.content.strip() and in_window(r, now, budget.window_days)
    ]
    bounded: list[Record] = []
    for key, _title, types in SECTIONS:
        mine = sorted((r for r in candidates if r.type in types), key=_rank_key)
        bounded += mine[: max(budget.cap(key) * CANDIDATES_PER_ENTRY, CANDIDATES_MIN)]
    ranked = sorted(dedupe(bounded, budget.dedup_similarity), key=_rank_key)
    # Section caps first, then the overall top-N: with the default caps (8 + 15 + 15 ≤ 40) a
    # flood of one type never starves another section (docs/decisions.md).
    capped = {
        key: [r for r in ranked if r.type in types][: budget.cap(key)]
        for key, _t, types in SECTIONS
    }
    best = {
        id(r)
        for r in sorted((r for v in capped.values() for r in v), key=_rank_key)[: budget.top_n]
    }
    return {key: [r for r in records if id(r) in best] for key, records in capped.items()}


def one_line(text: str, limit: int) -> str:
    """Whitespace folded to single spaces; cut to `limit` characters ending in `…`."""
    folded = fold_whitespace(text)
    return folded if len(folded) <= limit else folded[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def shown_line(text: str, limit: int) -> str:
    """An entry as `one_line`, or one a preview would not show whole (memfuse.text.hidden, and
    a link definition, which leaves an empty item) as a code span, its invisible code points as
    its number (`<U+200B>`): a person sees what the model reads."""
    line = one_line(text, limit)
    if not read(f"- {line}\n")[1].hidden_items:  # read as a journal's bullet is
        return line
    plain = escaped(fold_whitespace(text)[:limit])  # escaping only lengthens it
    fence = "`" * (max(map(len, re.findall("`+", plain)), default=0) + 1)
    return f"{fence} {one_line(plain, max(limit - 2 * len(fence) - 2, 1))} {fence}"


def render(sections: Mapping[str, Sequence[Record]], now: datetime, budget: Budget) -> str:
    """The exact RECENT.md layout. Never more than `budget.max_lines` lines."""
    entries = {key: [shown_line(r.content, budget.entry_chars) for r in sections.get(key, [])]
               for key, _title, _types in SECTIONS}  # fmt: skip
    header = ["# RECENT.md", "", f"_auto-updated: {now.strftime('%Y-%m-%d %H:%M')}_"]
    fixed = len(header) + 2 * len(SECTIONS)
    room = max(budget.max_lines - fixed, 0)
    # Over budget (only possible with custom caps): trim events first, then knowledge.
    for key in ("event", "knowledge", "emotion"):
        excess = sum(len(v) for v in entries.values()) - room
        if excess > 0:
            entries[key] = entries[key][: max(len(entries[key]) - excess, 0)]
    lines = list(header)
    for key, title, _types in SECTIONS:
        lines += ["", f"## {title}"] + [f"- {text}" for text in entries[key]]
    return "\n".join(lines[: budget.max_lines]) + "\n"


def section_counts(text: str) -> dict[str, int]:
    """Count the entries of each section of a RECENT.md: the top-level list items under its
    `##` titles, as CommonMark reads them."""
    counts = dict.fromkeys((key for key, _t, _ty in SECTIONS), 0)
    titles = {title: key for key, title, _types in SECTIONS}
    current = None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for _first, _end, tokens in token_chunks(lines, PIECE if len(text) > WHOLE else None):
        if tokens is None:
            continue
        for n, token in enumerate(tokens):
            if token.type == "heading_open" and token.level == 0:
                current = titles.get(tokens[n + 1].content) if token.tag == "h2" else None
            elif token.type == "list_item_open" and token.level == 1 and current:
                counts[current] += 1
    return counts


# --- the lines memfuse did not write (memfuse.workspace.recent_keep keeps them) -------------
# The copy is bounded: a line already kept is not kept twice, and past KEPT_MAX bytes the
# oldest kept lines give way.
KEPT_MAX = 256 * 1024
KEPT_HEADER = (
    "# Lines kept from RECENT.md\n\n"
    "memfuse rewrites RECENT.md at each surface; these lines were in it and memfuse had not\n"
    "written them. Move what you want to keep into a journal or MEMORY.md.\n"
)


# The template's time line, as `render` writes it: memfuse's own whatever state folder wrote it.
# The agent can write one too; at worst that line is dropped, and memfuse writes its own.
STAMPED = re.compile(r"_auto-updated: [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}_")


def foreign_lines(current: str, written: str | None, new: str) -> list[str]:
    """The lines of RECENT.md as it is (`current`) that memfuse did not write, last (`written`;
    None: no record) or now; non-blank, in file order, each once, the time line left out."""
    ours = set(new.splitlines()) | set((written or "").splitlines())
    seen: set[str] = set()
    found = []
    for raw in current.splitlines():
        line = raw.rstrip()
        if STAMPED.fullmatch(line):
            continue
        if line.strip() and line not in ours and line not in seen:
            seen.add(line)
            found.append(line)
    return found


def kept_text(
    existing: str, lines: Sequence[str], when: datetime, cap: int = KEPT_MAX
) -> tuple[str, int]:
    """The copy with the new `lines` added under the time they were found, and how many lines
    were dropped, oldest first, to keep it within `cap` bytes."""
    body = existing.removeprefix(KEPT_HEADER).splitlines() if existing else []
    held = set(body)
    fresh = [line for line in lines if line not in held]
    if fresh:
        body += ["", f"## {when.strftime('%Y-%m-%d %H:%M')}", *fresh]
    # Where to cut, found in one pass from the oldest line (a copy of any size costs its
    # length, not its square: the hostile review's 1 MiB copy took minutes line by line).
    size = len(KEPT_HEADER.encode()) + sum(len(line.encode()) + 1 for line in body)
    cut = 0
    while cut < len(body) and size > cap:
        size -= len(body[cut].encode()) + 1
        cut += 1
    dropped = sum(1 for line in body[:cut] if line.strip() and not line.startswith("## "))
    while cut < len(body) and not body[cut].strip():
        cut += 1
    body = body[cut:]
    return KEPT_HEADER + ("\n" + "\n".join(body) + "\n" if body else ""), dropped
