"""What issue 49's fusion adds to a question, measured: the full match of a Chinese question
(memfuse.recall.meaning.full_match_in: the question's terms' row counts and the index's row
total, read from its files' counts) and the day's prior over a question's candidates, on an
index the size of ten years of journals (146 000 rows in 3 650 files); beside them, what
counting the rows themselves would cost.

    nice -n 10 .venv/bin/python benchmarks/recall_fusion_cost.py
    # prints, and replaces its section of docs/recall-quality.md (--no-write: print only)

The index is the real RecallIndex's schema, its `docs`, `files` and `terms` tables filled
directly (the full match reads nothing else); each figure is the median of 50 calls.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sections import publish

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## What the fusion costs a question (issue 49)"
ROWS, FILES = 146_000, 3_650
QUESTION = "给邻居做了什么菜表示感谢"


def median_ms(call: Callable[[], object], runs: int = 50) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from memfuse.recall.index import RecallIndex
    from memfuse.recall.meaning import full_match_in, with_day
    from memfuse.recall.terms import doc_terms
    from memfuse.state.folder import StateFolder

    with tempfile.TemporaryDirectory(prefix="memfuse-fusion-cost-") as tmp:
        state = StateFolder(Path(tmp) / "state")
        RecallIndex(state).close()  # the schema; filled through a plain connection (memfuse's
        db = sqlite3.connect(state.recall_index)  # own bounds each statement's time)
        per = ROWS // FILES
        db.executemany(
            "INSERT INTO files (path, mtime_ns, ctime_ns, ino, size, days, rows)"
            " VALUES (?, 0, 0, 0, 0, '', ?)",
            ((f"memory/{n}.md", per) for n in range(FILES)),
        )
        db.executemany(
            "INSERT INTO docs (path, line, day, type, content) VALUES (?, ?, '2026-01-01', 'event', ?)",
            ((f"memory/{n // per}.md", n % per, f"第{n}条：今天做了一些事情，记一笔" + "x" * 80)
             for n in range(ROWS)),
        )  # fmt: skip
        terms = set(doc_terms(QUESTION)) | set(doc_terms("今天做了一些事情，记一笔"))
        db.executemany(
            "INSERT INTO terms (term, rows) VALUES (?, ?)",
            ((t, 1 + hash(t) % ROWS) for t in terms),
        )
        db.commit()
        db.close()
        index = RecallIndex(state)
        full = median_ms(lambda: full_match_in(index, QUESTION))
        count = median_ms(lambda: index.db.execute("SELECT count(*) FROM docs").fetchone())
        score = {i: 1.0 / (1 + i) for i in range(100)}
        day_of = {i: f"2026-01-{1 + i % 28:02d}" for i in range(100)}
        day = median_ms(lambda: with_day(score, day_of))
        index.close()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = [
        f"{SECTION}\n",
        "Reproduce: `nice -n 10 .venv/bin/python benchmarks/recall_fusion_cost.py` (its"
        f" docstring says how). {ROWS:,} rows in {FILES:,} files, measured"
        f" {datetime.now():%Y-%m-%d %H:%M}, load average {load} on"
        f" {os.cpu_count()} cores; the median of 50 calls:\n",
        "| step | ms |",
        "|---|---:|",
        f"| a Chinese question's full match (its terms' counts, the rows from the files') | {full:.3f} |",
        f"| (the rows counted instead: `count(*)` of the index's rows) | {count:.3f} |",
        f"| the day's prior over 100 candidates | {day:.3f} |",
        "",
        "A question in Latin letters reads nothing more: the full match is for a question that"
        " holds a CJK character (docs/decisions.md 370).",
        "",
    ]
    publish(text, ROOT / "docs" / "recall-quality.md", SECTION, write=not options.no_write,
            before="## What a question asks the index")  # fmt: skip


if __name__ == "__main__":
    main()
