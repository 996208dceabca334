"""A day's journal as the union of its forms. Pure.

A day can live in several files at once (`tidy --archive` moves and copies the daily; a late
note lands in a new daily or in the roll-up): every bullet in any of them is one of the day's.

The forms are taken in a fixed order: the archived copies (the exact dailies, oldest first),
then the daily, then the roll-up's sections in file order. The first form's bullets keep their
own positions: a day that was only ever one file keeps every URI it had. A later form adds the
bullets the earlier ones do not already hold (by text, counted: a note written twice in one
form is two bullets, a note copied from one form to another is one), and each added bullet
takes the next free count of its section, as if it had been appended to the first form. So a
late note never takes the position of a bullet already synced, and archiving it again (which
only moves and copies) leaves every position where it was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from memfuse.workspace.bullets import ORDERED_FROM, Bullet, Places


@dataclass(frozen=True)
class Part:
    """One form of a day's journal, read: the file it is in and its bullets."""

    path: Path
    bullets: tuple[Bullet, ...]


@dataclass(frozen=True)
class Merged:
    """A day's bullets from all its forms, each with the file it was read from."""

    bullets: tuple[Bullet, ...]
    origins: tuple[Path, ...]  # where each bullet is, in step with `bullets`


def union(parts: Sequence[Part]) -> Merged:
    """The day's bullets: the first part whole, then what each later part adds."""
    bullets: list[Bullet] = []
    origins: list[Path] = []
    held: Counter[str] = Counter()  # how many bullets with each text the union holds
    counts: Counter[tuple[str, bool]] = Counter()  # the counts taken, by section and kind
    places = Places()  # the positions taken: never two bullets on one
    for index, part in enumerate(parts):
        mine: Counter[str] = Counter()
        for bullet in part.bullets:
            mine[bullet.text] += 1
            if index > 0 and mine[bullet.text] <= held[bullet.text]:
                continue  # a copy of a bullet an earlier form holds
            ordered = bullet.n > ORDERED_FROM
            counts[bullet.key, ordered] += 1
            taken = bullet
            if index > 0:  # the first form's own counts are these same counts
                n = counts[bullet.key, ordered] + (ORDERED_FROM if ordered else 0)
                taken = replace(bullet, n=places.take(bullet.key, n))
            else:
                places.take(bullet.key, bullet.n)  # the parser made them unique already
            bullets.append(taken)
            origins.append(part.path)
        for text, count in mine.items():
            held[text] = max(held[text], count)
    return Merged(tuple(bullets), tuple(origins))
