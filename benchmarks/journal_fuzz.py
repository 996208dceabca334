"""The longer fuzz of the journal grammar against commonmark.js (issue 39): generated journals
(tests/reader/journals.py: the constructs of issue 39's families and those agents write),
read by memfuse and by the CommonMark reference implementation, in batches of fresh seeds.

Prints how many journals ran, how many agree, and how many differ only by a recorded
divergence (tests/reader/journals.py, DIVERGENCES), with one example of any other difference.
Exits 1 when any journal differs otherwise.

    .venv/bin/python benchmarks/journal_fuzz.py            # 100 batches of 2 000 journals
    .venv/bin/python benchmarks/journal_fuzz.py 10 1000    # 10 batches of 1 000
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.reader.journals import commonmark_js, differences, divergence, journal


def main(batches: int, size: int) -> int:
    started = time.monotonic()
    ran, agreed, bullets = 0, 0, 0
    allowed: Counter[str] = Counter()
    other: list[tuple[str, list[str]]] = []
    for batch in range(batches):
        rng = random.Random(10_000 + batch)  # not the unit test's seed (39)
        texts = [journal(rng) for _ in range(size)]
        for text, theirs in zip(texts, commonmark_js(texts), strict=True):
            ran += 1
            bullets += len(theirs)
            found = differences(text, theirs)
            if not found:
                agreed += 1
            elif (name := divergence(text)) is not None:
                allowed[name] += 1
            else:
                other.append((text, found))
    spent = time.monotonic() - started
    print(f"{ran} journals ({bullets} items by commonmark.js) in {spent:.0f} s: {agreed} agree,")
    print(f"  {sum(allowed.values())} differ by a recorded divergence {dict(allowed)},")
    print(f"  {len(other)} differ otherwise")
    for text, found in other[:1]:
        print(f"  e.g. {text!r}: {found}")
    return 1 if other else 0


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    sys.exit(main(*(args or [100, 2000])))
