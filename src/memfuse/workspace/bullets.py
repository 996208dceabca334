"""What a journal's reading gives: bullets keyed by (HHMM, N), and the tally of what each rule
took (SPEC §3). Both readings (memfuse.workspace.plain, memfuse.workspace.blocks) build them
through one `Builder`, so their sections, counts and tallies cannot drift apart. Pure."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, fields

from memfuse.text.hidden import Hiding

NO_TIME = "0000"
_TIME = re.compile(r"(?<![0-9])([01]?[0-9]|2[0-3]):([0-5][0-9])(?![0-9])")

# A numbered item is a bullet too, counted apart from `-`/`*`/`+` items from ORDERED_FROM + 1
# in its section: journals synced before numbered items were read keep every position.
ORDERED_FROM = 1000


def section_key(heading_text: str) -> str:
    """`14:00 memory-sync` → `1400`; `Morning (9:00-12:00)` → `0900`; no time → `0000`."""
    match = _TIME.search(heading_text)
    return f"{int(match[1]):02d}{match[2]}" if match else NO_TIME


@dataclass(frozen=True)
class Bullet:
    key: str  # HHMM of its section, "0000" when none
    n: int  # 1-based count of bullets with this key, in file order
    text: str
    line: int  # 1-based line where the bullet starts

    @property
    def position(self) -> str:
        return f"{self.key}-{self.n}"


@dataclass(frozen=True)
class Tally:
    """What one reading of one journal form took, for the run's accounting (SPEC §3): every
    list item a viewer shows is a bullet, an empty item, or inside a dreaming block; every
    other line of visible text is code, a heading, or counted in `other_lines`. Lines are
    non-blank lines of the form; counts are of that form alone (add them up across forms)."""

    items: int = 0  # outermost list items outside code and dreaming blocks: bullets + empty
    empty: int = 0  # items with no text once comments are out: not bullets, not counted
    code_lines: int = 0  # lines of fenced or indented code outside every item
    comments: int = 0  # HTML comments outside code and dreaming blocks, in items or not
    comment_chars: int = 0  # their characters, `<!--` and `-->` included
    dreaming_blocks: int = 0  # the host's dreaming blocks, between their own markers
    dreaming_lines: int = 0  # their lines, markers included
    other_lines: int = 0  # visible text outside every item, code, heading and rule (prose)
    first_other: int = 0  # the 1-based line of the first of those; 0 when none
    deep_lines: int = 0  # lines of blocks nested too deep to parse, or past the reading's
    # budget (memfuse.workspace.blocks): each block read as one bullet when it holds a list
    # marker (counted in `items`), else as other lines (also counted there)
    hidden_items: int = 0  # bullets, headings, blocks a preview hides of (memfuse.text.hidden)
    first_hidden: int = 0  # the 1-based line of the first of them; 0 when none

    def __add__(self, other: Tally) -> Tally:
        """Two forms' tallies summed (`first_other` kept from the first that has one)."""
        summed = {f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        summed["first_other"] = self.first_other or other.first_other
        summed["first_hidden"] = self.first_hidden or other.first_hidden
        return Tally(**summed)


class Places:
    """The positions a day's bullets have taken, each once. A section of over 1000 `-` items
    meets the numbered items' counts: the later of two such bullets takes the section's next
    count above every one taken (one step, however hostile the file)."""

    def __init__(self) -> None:
        self.used: set[tuple[str, int]] = set()
        self.top: dict[str, int] = {}

    def take(self, key: str, n: int) -> int:
        if (key, n) in self.used:
            n = self.top[key] + 1
        self.used.add((key, n))
        self.top[key] = max(self.top.get(key, 0), n)
        return n


class Builder:
    """A journal's bullets and tally, built in file order from what a reading found."""

    def __init__(self) -> None:
        self.key = NO_TIME
        self.counts: Counter[tuple[str, bool]] = Counter()
        self.places = Places()
        self.bullets: list[Bullet] = []
        self.took: Counter[str] = Counter()  # Tally's counts by field name
        self.first_other = 0
        self.first_hidden = 0
        self.hiding = Hiding()

    def heading(self, title: str, level: int, line: int) -> None:
        """A heading outside every item at 0-based `line`: an ATX one (`level` 1-6, else 0) of
        2-6 with a time starts a section. Named as `## 09:00 <style>` (hiding the rest) is."""
        if level:
            self.key = section_key(title) if level > 1 else NO_TIME
        if self.hiding(title) is not None:
            self.hidden_block(line)

    def item(self, first: int, text: str, *, ordered: bool, hides: bool = False) -> None:
        """A list item starting at 0-based line `first`, its text already made; `hides`: it
        holds a comment its end closed, which a browser reads on over the bullets after it."""
        self.took["items"] += 1
        if hides:
            self.hidden_block(first)
        if not text:
            self.took["empty"] += 1
            return
        self.counts[self.key, ordered] += 1
        count = self.counts[self.key, ordered] + (ORDERED_FROM if ordered else 0)
        count = self.places.take(self.key, count)
        self.bullets.append(Bullet(self.key, count, text, first + 1))
        if not hides and self.hiding(text) is not None:  # named by sync, sent as it is
            self.hidden_block(first)

    def hidden_block(self, line: int) -> None:
        """A block a preview hides, or that hides the bullets after it (`<details>`, `<div
        hidden>`, `## 09:00 <style>` …), starting at 0-based `line`; an item that hides
        (`item`) is counted the same way."""
        self.took["hidden_items"] += 1
        self.first_hidden = self.first_hidden or line + 1

    def other(self, line: int, count: int = 1) -> None:
        """`count` lines of other visible text, the first at 0-based `line`."""
        if count:
            self.took["other_lines"] += count
            self.first_other = self.first_other or line + 1

    def tally(self) -> Tally:
        return Tally(**self.took, first_other=self.first_other, first_hidden=self.first_hidden)


def item_text(lines: list[str]) -> str:
    """An item's lines (marker and container prefixes gone), each stripped, blanks left out."""
    return "\n".join(s for s in (line.strip() for line in lines) if s)
