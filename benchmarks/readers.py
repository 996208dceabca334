"""What the plain reading of journals saves: every journal of bench.py's workspaces read as a
sync reads it (the plain reading, markdown-it where it declines) and by markdown-it alone, in
one process; medians of 5. Issue 48 asked whether one reader would do (decision 412).

    .venv/bin/python benchmarks/readers.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import bench

sys.path.insert(0, str(bench.ROOT / "src"))

from memfuse.workspace.blocks import read_blocks
from memfuse.workspace.journal import decode, read


def median_ms(texts: list[str], reader: object) -> float:
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        for text in texts:
            reader(text)  # type: ignore[operator]
        runs.append(time.perf_counter() - started)
    return statistics.median(runs) * 1000


def main() -> None:
    print("| bullets | journals | as a sync reads them | markdown-it alone |")
    print("|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for bullets in (1_000, 10_000, 100_000):
            ws, _ = bench.make_workspace(Path(tmp) / str(bullets), bullets, seed=11)
            files = sorted((ws / "memory").glob("*.md"))
            texts = [decode(path.read_bytes())[0] for path in files]
            both, blocks = median_ms(texts, read), median_ms(texts, read_blocks)
            print(f"| {bullets} | {len(texts)} | {both:.0f} ms | {blocks:.0f} ms |")


if __name__ == "__main__":
    main()
