"""Issue 46's recall line: a question right after a note appended to a large journal, the
recall index taking only what was appended (memfuse.recall.tail), at 1, 8 and 16 MiB.

    .venv/bin/python benchmarks/index_tail.py              # 1 8 16 MiB, 3 notes each
    .venv/bin/python benchmarks/index_tail.py --mib 8 --notes 5

Each size is one plain journal (today's, as notes make it: `journal`) indexed whole first. Then, `--notes` times: one bullet is appended as the
`note` tool appends it, and a fresh `memfuse recall --without store` process asks a question
that finds it (MEMFUSE_SEMANTIC=off: the words alone) — its wall time, the process's start
included — then the same question again with nothing changed (the process's own cost, to
set the first against), and, in this process, one refresh of the open index with its own counters (what
was re-read). With the `semantic` extra installed, one more note is asked with meaning on, and
the texts the model embedded are counted, every older bullet having its vector (the new
bullet only; the question's own embedding is apart). Prints the figures as a Markdown table, with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

WORDS = (
    "vendor budget storm deploy review ticket meeting dinner garage editor billing rent"
    " neighbour thanks phone mother plants sink inspection tyres"
).split()
DAY = "2026-12-06"


def journal(path: Path, mib: int) -> int:
    """Today's journal as notes make it: a `## HH:MM` section an hour or so (here one each
    4 000 bullets, every one its own time), bullets of ~100 characters, up to 64 KiB short of
    `mib` MiB (16 MiB is the read limit)."""
    lines: list[str] = []
    size, n, section = 0, 0, 0
    while size < mib * 1024 * 1024 - 65536:
        if n % 4000 == 0:
            lines.append(f"## {section % 24:02d}:{section // 24 % 60:02d}")
            section += 1
        words = " ".join(WORDS[(n * 7 + k * 3) % len(WORDS)] for k in range(12))
        lines.append(f"- Note {n:06d} on the {words}")
        size += len(lines[-1]) + 1
        n += 1
    path.write_text("\n".join(lines) + "\n")
    return n


def recall(ws: Path, state: Path, question: str, meaning: bool) -> tuple[float, dict[str, object]]:
    env = {**os.environ, "MEMFUSE_WORKSPACE": str(ws), "MEMFUSE_STATE_DIR": str(state)}
    if not meaning:
        env["MEMFUSE_SEMANTIC"] = "off"
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "memfuse", "recall", "--json", "--without", "store",
         "--now", f"{DAY}T22:00", question],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    took = time.perf_counter() - started
    envelope = json.loads(out.stdout)
    return took, envelope


def one_size(root: Path, mib: int, notes: int) -> list[str]:
    import numpy as np

    from memfuse.recall import vectors
    from memfuse.recall.index import RecallIndex
    from memfuse.recall.semantic import installed
    from memfuse.state.folder import StateFolder
    from memfuse.text.classify import Classifier
    from memfuse.workspace.layout import Workspace

    ws, state = root / f"ws{mib}", root / f"state{mib}"
    (ws / "memory").mkdir(parents=True)
    path = ws / "memory" / f"{DAY}.md"
    bullets = journal(path, mib)
    workspace, classifier = Workspace(ws, state), Classifier((), ())
    index = RecallIndex(StateFolder(state))
    started = time.perf_counter()
    index.refresh(workspace, classifier, print)
    whole = time.perf_counter() - started
    walls, still, refreshes, counted = [], [], [], []
    for k in range(notes):
        with path.open("a") as f:
            f.write(f"- Storm note {mib}x{k} about the zebra budget\n")
        took, envelope = recall(ws, state, f"zebra {mib}x{k}", meaning=False)
        top = envelope["data"]["results"][0]["content"]  # type: ignore[index]
        assert top == f"Storm note {mib}x{k} about the zebra budget", top
        walls.append(took)
        still.append(recall(ws, state, f"zebra {mib}x{k}", meaning=False)[0])
        with path.open("a") as f:
            f.write(f"- Quiet note {mib}y{k} about the giraffe\n")
        index.counted.clear()
        started = time.perf_counter()
        index.refresh(workspace, classifier, print)
        refreshes.append(time.perf_counter() - started)
        counted.append(dict(index.counted))
    row = [
        f"| {mib} MiB ({bullets:,} bullets) | {whole:.2f} s | {statistics.median(walls):.2f} s"
        f" ({min(walls):.2f}–{max(walls):.2f}) | {statistics.median(still):.2f} s |"
        f" {statistics.median(refreshes) * 1000:.0f} ms |"
        f" {counted[-1].get('bytes', 0):,} bytes, {counted[-1].get('rows', 0)} rows,"
        f" {counted[-1].get('whole', 0)} read whole |"
    ]
    model = installed()
    if model is not None:
        asked = []
        real = model.embed

        def counting(texts: list[str], *, question: bool = False) -> object:
            if not question:
                asked.extend(texts)
            return real(texts, question=question)

        # every bullet given a vector first: the model's own for the newest 1 000, random int8
        # of its size for the rest (embedding 150 000 would take this machine most of an hour)
        index.embed(model, vectors.EmbedBudget(1000, 1e9), print)
        rest = vectors.pending_texts(index.db, 10**7)
        blobs = np.random.default_rng(7).integers(-127, 128, (len(rest), 512), dtype=np.int8)
        with index.db:
            index.db.execute("BEGIN")
            index.db.executemany(
                "INSERT INTO vectors (content, vec) VALUES (?, ?)",
                zip(rest, (b.tobytes() for b in blobs), strict=True),
            )
            index.db.execute("UPDATE embedder SET pending = 0")
        with path.open("a") as f:
            f.write(f"- Meaning note {mib} about the okapi\n")
        model.embed = counting  # type: ignore[method-assign]
        index.refresh(workspace, classifier, print, model)
        row.append(f"with meaning on, the refresh after one more note embedded {len(asked)}"
                   f" text(s): {asked[:3]}")  # fmt: skip
    index.close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, nargs="*", default=[1, 8, 16])
    parser.add_argument("--notes", type=int, default=3)
    options = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"load average before: {load:.2f}; {time.strftime('%Y-%m-%d %H:%M')}\n")
    print("| journal | indexed whole | `memfuse recall` after a note, cold process (median,"
          " range) | the same again, nothing changed (median) | one refresh after a note, in"
          " process (median) | what it re-read |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---|")
    extra = []
    with tempfile.TemporaryDirectory(prefix="memfuse-tail-") as tmp:
        for mib in options.mib:
            row = one_size(Path(tmp), mib, options.notes)
            print(row[0], flush=True)
            extra += row[1:]
    for line in extra:
        print(f"\n{line}")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
