"""Where the time of test_journal's parsing property goes (issue 59): Hypothesis's one-time
alphabet table, or a drawn journal the parser reads in more than linear time.

First, the CPU of the table `st.text()`'s default alphabet needs (built once per `.hypothesis/`
folder, here a fresh one) beside tests/conftest.py's ANY_CHARACTER, the same characters. Then
the property's own journals (`journal_lines`, SEEDS × 300 draws, as a thorough run draws them)
are read by `memfuse.workspace.journal.read`; the 50 dearest are each repeated to ~10 KB, and
the 5 dearest per byte of those read at 1×, 10× and 100× that: a cost linear in bytes grows ~10×
a step. Process CPU seconds.

    .venv/bin/python benchmarks/journal_draws.py        # 20 seeds
    .venv/bin/python benchmarks/journal_draws.py 60
    .venv/bin/python benchmarks/journal_draws.py 0 big  # only DENSE at 2 and 8 MiB, GC on/off
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import configuration, given, seed, settings
from hypothesis import strategies as st
from hypothesis.internal import charmap
from tests.conftest import ANY_CHARACTER
from tests.unit.test_journal import journal_lines

from memfuse.workspace.journal import read


def cpu(work: object, *args: object) -> float:
    started = time.process_time()
    work(*args)  # type: ignore[operator]
    return time.process_time() - started


# A drawn shape markdown-it reads (for its empty item): text, two headings, three items in 44 B.
DENSE = "7\u00ca\n### Notes\n\n## 22:00 sync\n- \n- \U00060df7f.0\n- "


def big() -> None:
    """DENSE at ~2 and ~8 MiB, with CPython's cyclic collector and without."""
    read(DENSE)
    for collect in (True, False):
        gc.enable() if collect else gc.disable()
        for k in (48_000, 192_000):
            text = DENSE * k
            print(
                f"collector {'on ' if collect else 'off'} {len(text.encode()):>9} B "
                f"{cpu(read, text):7.2f} s",
                flush=True,
            )
    gc.enable()


def main(seeds: int) -> None:
    configuration.set_hypothesis_home_dir(tempfile.mkdtemp())
    print(f"ANY_CHARACTER's table: {cpu(ANY_CHARACTER.validate):.2f} s")
    print(f"st.text()'s UTF-8 codec table: {cpu(charmap.intervals_from_codec, 'utf-8'):.2f} s")
    read("- a <b> ](x) é\u200b\n> q\n")  # the reader's own one-time tables
    drawn: list[str] = []
    for n in range(seeds):

        @seed(n)
        @settings(max_examples=300, deadline=None, database=None)
        @given(st.lists(journal_lines, max_size=40))
        def draw(lines: list[str]) -> None:
            drawn.append("\n".join(lines) + "\n")

        draw()
    spent = sum(cpu(read, text) for text in drawn)
    print(f"{len(drawn)} drawn journals read in {spent:.2f} s")
    # the 50 dearest, each repeated to ~10 KB; the 5 dearest per byte of those grown 10×, 100×
    slow = sorted(drawn, key=lambda t: min(cpu(read, t) for _ in range(3)))[-50:]
    tens = [text * -(-10_000 // len(text)) for text in slow]
    for text in sorted(tens, key=lambda t: cpu(read, t) / len(t))[-5:]:
        grown = [text * k for k in (1, 10, 100)]
        row = [f"{len(g.encode()):>9} B {cpu(read, g):7.3f} s" for g in grown]
        print(" | ".join(row), "|", repr(text[:40]))


if __name__ == "__main__":
    if sys.argv[2:] == ["big"]:
        big()
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
