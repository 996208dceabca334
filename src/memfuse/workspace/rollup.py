"""The weekly roll-up: old dailies appended, bullets intact, to `memory/weekly/<Monday>.md`.

Each daily becomes a `## YYYY-MM-DD` section of its week's file with its own headings shifted
below that level (so `## 14:00` stays a timed section, `#### 14:00`) and any code fence or
HTML block it leaves open closed, then the daily moves to `memory/archive/`. Appending is
idempotent: a daily whose bullets the roll-up already shows for its date is not appended
again, so a run interrupted between the append and the move finishes cleanly; a late daily,
written after its day was rolled up, gets a second section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from memfuse.workspace.forms import Part, union
from memfuse.workspace.journal import decode, parse
from memfuse.workspace.layout import Workspace
from memfuse.workspace.names import monday_of
from memfuse.workspace.sections import closed, heading_lines
from memfuse.workspace.weekly import weekly_sections

_HEADING = re.compile(r"^( {0,3})(#{1,6})([ \t]|$)")


def shift_headings(text: str, top: int = 3) -> str:
    """Shift every heading a viewer shows at the top level so the shallowest becomes level
    `top` (≤ 6). A heading inside a list item, a block quote or code is the text of what holds
    it, so it stays as written: a bullet holding `  ## Before the cutover` reads back from the
    roll-up as the same bullet as from its daily."""
    lines = text.split("\n")
    heads = {n: match for n in heading_lines(lines) if (match := _HEADING.match(lines[n]))}
    if not heads:
        return text
    shift = top - min(len(match[2]) for match in heads.values())
    for n, match in heads.items():
        level = min(max(len(match[2]) + shift, 1), 6)
        lines[n] = match[1] + "#" * level + lines[n][match.end(2) :]
    return "\n".join(lines)


def adds_to(weekly_text: str, day: date, daily_text: str) -> bool:
    """Whether a daily holds what the roll-up does not yet show for its day: the roll-up has
    no section for it, or the daily has a bullet its sections lack (a late note to a day
    already rolled up gets a section of its own). Not when a run stopped between the append
    and the move: the section is there."""
    sections = weekly_sections(weekly_text).get(day)
    if not sections:
        return True
    daily = tuple(parse(daily_text))
    shown = [Part(Path("weekly"), s.bullets) for s in sections]
    merged = union([*shown, Part(Path("daily"), daily)])
    return Path("daily") in merged.origins


@dataclass(frozen=True)
class Rolled:
    day: date
    weekly: Path
    archived_to: Path
    appended: bool  # False when the weekly file already held this date


def roll_up(workspace: Workspace, day: date, daily: Path, raw: bytes) -> Rolled:
    """Append one daily (its bytes `raw`) to its weekly file and move it into the archive.

    Both writes are confined to the workspace: a weekly file or archive folder that links out
    raises UnsafePath before anything changes.
    """
    files = workspace.files
    weekly = workspace.weekly_path(day)
    try:
        existing = decode(files.read(weekly, own=True))[0]
    except FileNotFoundError:
        existing = ""
    body, _replaced = decode(raw)
    appended = adds_to(existing, day, body)
    if appended:
        if not existing:
            existing = f"# Week of {monday_of(day).isoformat()}\n"
        # a fence or HTML block the daily leaves open is closed, or it would swallow every
        # day's heading after it (its bullets are the same either way)
        section = f"\n## {day.isoformat()}\n\n{closed(shift_headings(body).strip())}\n"
        data = (existing.rstrip("\n") + "\n" + section).encode("utf-8")
        files.write(weekly, data, create_parents=True)
    target = files.move_into(daily, workspace.archive_dir)
    return Rolled(day, weekly, target, appended)
