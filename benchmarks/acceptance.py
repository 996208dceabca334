"""Issue 32's speed acceptance: `memfuse sync` before issue 32 (commit 5354185) against this
checkout, A/B, on the same machine in the same run.

Run from a set-up checkout (`scripts/setup.sh`):

    .venv/bin/python benchmarks/acceptance.py            # 7 runs a side of each scenario
    .venv/bin/python benchmarks/acceptance.py --quick    # 3 runs a side, to try it out

The baseline's source is checked out with `git worktree add --detach` into a temporary
folder (removed at the end, on error too) and run by this venv's Python with that `src/`
first on PYTHONPATH; "now" runs with this checkout's `src/` there. Before measuring, one
untimed sync a side runs under PYTHONVERBOSE and every file Python loaded a `memfuse` module
from (`cli`, `commands.sync` and `workspace.journal` among them) is checked to be that side's. Runs alternate A/B (then B/A)
so that the other work of a shared machine falls on both; each figure is a median.

(a) a plain `memfuse sync` of examples/workspace into a fresh reference server; (b) the year
of benchmarks/bench.py `--only year`: 365 journals × 40 bullets synced once, then before each
timed plain sync one bullet is added to the journal of 200 days ago; (c) a rebuild: a full
sync of 1 000 bullets (40 a journal), the database deleted, the next plain sync timed.
memfuse's own time is the JSON envelope's `duration_ms` less its `store_ms`. Then (scale) what
grows with the bullets in a rebuild, `--verify` or `--all`: one process parsing every journal
of 1×, 10× and 100× the rebuild's bullets, each side, and now's markdown-it alone for scale.

"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import bench

BASELINE = "5354185"  # main before issue 32's work
YEAR_BULLETS = 365 * bench.PER_JOURNAL
REBUILD_BULLETS = 1000


@dataclass
class Side:
    """One memfuse under test: its source tree and the environment its runs get."""

    name: str
    src: Path
    root: Path  # where its workspaces, databases and state folders go
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        self.env = {**env, "PYTHONPATH": str(self.src)}

    def state(self, label: str) -> dict[str, str]:
        """The environment of a run whose memfuse state lives in a folder of its own."""
        folder = self.root / "state" / label
        folder.mkdir(parents=True, exist_ok=True)
        return {**self.env, "XDG_STATE_HOME": str(folder)}


@dataclass
class Figures:
    wall: list[float] = field(default_factory=list)  # seconds
    own: list[float] = field(default_factory=list)  # seconds

    def add(self, seconds: float, envelope: dict[str, Any]) -> None:
        self.wall.append(seconds)
        self.own.append((envelope["duration_ms"] - envelope["store_ms"]) / 1000)


@contextmanager
def baseline_tree(commit: str) -> Iterator[Path]:
    """A detached worktree of `commit`, removed afterwards whatever happens."""
    folder = Path(tempfile.mkdtemp(prefix="memfuse-baseline-"))
    tree = folder / "tree"
    subprocess.run(["git", "-C", str(bench.ROOT), "worktree", "add", "--detach", "-q",
                    str(tree), commit], check=True)  # fmt: skip
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(bench.ROOT), "worktree", "remove", "--force",
                        str(tree)], check=False)  # fmt: skip
        subprocess.run(["git", "-C", str(bench.ROOT), "worktree", "prune"], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def example_workspace(folder: Path) -> Path:
    ws = folder / "workspace"
    shutil.copytree(bench.ROOT / "examples" / "workspace", ws)
    return ws


def check_source(side: Side) -> None:
    """One untimed sync of the example, Python saying where each module came from: the
    memfuse it ran must be the side's own (an editable install must not win)."""
    folder = side.root / "check"
    server, ws = bench.reference_server(folder, "check"), example_workspace(folder)
    env = {**side.state("check"), "PYTHONVERBOSE": "1"}
    argv = [bench.MEMFUSE, "sync", "-w", str(ws), "--mcporter-config", str(server.config),
            "--now", "2026-11-30T23:00", "-q"]  # fmt: skip
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    # Python -v names the source file of every module it loads (compiled or from its cache).
    loaded = set(re.findall(r"[^\s']*/memfuse/[^\s']*?\.py(?!\w)", done.stderr))
    for modules in (
        ("cli.py", "cli/__init__.py"),
        ("commands/sync.py",),
        ("workspace/journal.py",),
    ):
        assert any(path.endswith(f"memfuse/{m}") for path in loaded for m in modules), (
            side,
            modules,
        )
    strays = [path for path in loaded if not path.startswith(f"{side.src}{os.sep}")]
    assert not strays, f"{side.name} loaded memfuse from elsewhere: {strays[:3]}"
    print(f"{side.name}: memfuse from {side.src}", flush=True)


def example_run(side: Side, n: int) -> tuple[float, dict[str, Any]]:
    folder = side.root / f"example{n}"
    server, ws = bench.reference_server(folder, "example"), example_workspace(folder)
    seconds, envelope = bench.sync_envelope(server, ws, env=side.state(f"example{n}"))
    assert envelope["data"]["counts"]["added"] > 0, envelope["data"]["counts"]
    return seconds, envelope


def year_setup(side: Side) -> Callable[[int], tuple[float, dict[str, Any]]]:
    """A year synced once; the run it returns adds one bullet to last spring's journal and
    times the plain sync."""
    folder = side.root / "year"
    server = bench.reference_server(folder, "year")
    ws, last = bench.make_workspace(folder, YEAR_BULLETS, seed=13)
    env = side.state("year")
    started = time.perf_counter()
    bench.sync_envelope(server, ws, "--all", env=env)
    print(f"{side.name}: the year's first sync took {time.perf_counter() - started:.0f} s",
          flush=True)  # fmt: skip
    changed = ws / "memory" / f"{last - timedelta(days=200)}.md"

    def run(n: int) -> tuple[float, dict[str, Any]]:
        # A note of the generator's kind, new each run: the store would fold a note much like
        # the run before's into it (`merged`), bench.touch's fixed sentence would be one.
        with changed.open("a", encoding="utf-8") as fh:
            fh.write(f"- {bench.bullet(random.Random(n), 90_000 + n)}\n")
        seconds, envelope = bench.sync_envelope(server, ws, env=env)
        assert envelope["data"]["counts"]["added"] == 1, envelope["data"]["counts"]
        return seconds, envelope

    return run


def rebuild_run(side: Side, n: int) -> tuple[float, dict[str, Any]]:
    folder = side.root / f"rebuild{n}"
    server = bench.reference_server(folder, "rebuild")
    ws, _last = bench.make_workspace(folder, REBUILD_BULLETS)
    env = side.state(f"rebuild{n}")
    bench.sync_envelope(server, ws, "--all", env=env)
    Path(server.env["AGENT_MEMORY_DB"]).unlink()
    seconds, envelope = bench.sync_envelope(server, ws, env=env)
    assert envelope["data"]["counts"]["restored"] == REBUILD_BULLETS, envelope["data"]["counts"]
    return seconds, envelope


# One process parses every journal of a folder: memfuse's own work per bullet in a rebuild, a
# --verify or an --all, measured apart from the store at 1x, 10x and 100x the rebuild's size.
PARSE = """
import pathlib, sys, time
from memfuse.workspace import journal
if sys.argv[2] == "markdown-it":
    from memfuse.workspace.blocks import read_blocks
    read = lambda raw: read_blocks(journal.decode(raw)[0]).bullets
else:
    read = lambda raw: journal.parse_bytes(raw).bullets
raws = [p.read_bytes() for p in sorted(pathlib.Path(sys.argv[1]).glob("*.md"))]
started = time.perf_counter()
count = sum(len(read(raw)) for raw in raws)
print(count, time.perf_counter() - started)
"""


def parse_run(side: Side, folder: Path, how: str) -> float:
    """Seconds `side`'s memfuse takes to parse the journals in `folder` (`how`: "parse",
    or "markdown-it": now's markdown-it reading for every journal)."""
    done = subprocess.run([bench.PY, "-c", PARSE, str(folder), how], env=side.env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    count, seconds = done.stdout.split()
    assert int(count) == len(list(folder.glob("*.md"))) * bench.PER_JOURNAL, count
    return float(seconds)


def scale_rows(sides: list[Side], root: Path, runs: int) -> list[str]:
    """Parsing 1x, 10x and 100x the rebuild's bullets: baseline, now, and now with markdown-it
    reading every journal (what the plain reading saves)."""
    rows = []
    for times in (1, 10, 100):
        ws, _last = bench.make_workspace(root / f"scale{times}", REBUILD_BULLETS * times)
        folder = ws / "memory"
        measured: dict[str, list[float]] = {"baseline": [], "now": [], "markdown-it": []}
        for n in range(runs):
            for side in sides if n % 2 == 0 else sides[::-1]:
                measured[side.name].append(parse_run(side, folder, "parse"))
            measured["markdown-it"].append(parse_run(sides[1], folder, "markdown-it"))
        base, now, slow = (statistics.median(v) * 1000 for v in measured.values())
        rows.append(
            f"| {times}×: {REBUILD_BULLETS * times:,} bullets in {len(list(folder.glob('*.md'))):,}"
            f" journals | {base:.0f} ms | {now:.0f} ms | {now / base:.2f}× | {slow:.0f} ms |"
        )
        print(rows[-1], flush=True)
    return [
        "| parse every journal | baseline | now | ratio | now, markdown-it for every journal |",
        "|---|---:|---:|---:|---:|",
        *rows,
    ]


def interleaved(
    sides: list[Side], runs: int, measure: Callable[[Side, int], tuple[float, dict[str, Any]]]
) -> dict[str, Figures]:
    """`runs` measurements a side, A then B, then B then A, and so on."""
    figures = {side.name: Figures() for side in sides}
    for n in range(runs):
        for side in sides if n % 2 == 0 else sides[::-1]:
            figures[side.name].add(*measure(side, n))
    return figures


def row(label: str, figures: dict[str, Figures]) -> str:
    base, now = figures["baseline"], figures["now"]
    bw, nw = statistics.median(base.wall), statistics.median(now.wall)
    bo, no = statistics.median(base.own), statistics.median(now.own)
    return (
        f"| {label} | {bw * 1000:.0f} ms | {nw * 1000:.0f} ms | {nw / bw:.2f}× "
        f"| {bo * 1000:.0f} ms | {no * 1000:.0f} ms | {no / max(bo, 0.001):.2f}× |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs a side of each scenario")
    parser.add_argument("--quick", action="store_true", help="3 runs a side")
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare against")
    parser.add_argument("--only", choices=("example", "year", "rebuild", "scale"), action="append")
    options = parser.parse_args()
    runs = 3 if options.quick else options.runs
    only = options.only or ["example", "year", "rebuild", "scale"]
    started, when = time.monotonic(), datetime.now()
    lines: list[str] = []
    with (
        baseline_tree(options.baseline) as tree,
        tempfile.TemporaryDirectory(prefix="memfuse-acceptance-") as tmp,
    ):
        sides = [
            Side("baseline", tree / "src", Path(tmp) / "baseline"),
            Side("now", bench.ROOT / "src", Path(tmp) / "now"),
        ]
        for side in sides:
            check_source(side)
        if "example" in only:
            figures = interleaved(sides, runs, example_run)
            lines.append(row("(a) plain `memfuse sync` of examples/workspace, fresh database", figures))  # fmt: skip
            print(lines[-1], flush=True)
        if "year" in only:
            year = {side.name: year_setup(side) for side in sides}
            figures = interleaved(sides, runs, lambda side, n: year[side.name](n))
            lines.append(row("(b) the year: plain `memfuse sync`, one bullet added to a journal of 200 days ago", figures))  # fmt: skip
            print(lines[-1], flush=True)
        if "rebuild" in only:
            figures = interleaved(sides, runs, rebuild_run)
            lines.append(row(f"(c) rebuild of {REBUILD_BULLETS} after the database was deleted: plain `memfuse sync`", figures))  # fmt: skip
            print(lines[-1], flush=True)
        scale = scale_rows(sides, Path(tmp), runs) if "scale" in only else []
    took = time.monotonic() - started
    head = [
        f"Measured on {when:%Y-%m-%d %H:%M} in {took:.0f} s on {bench.machine()} by"
        f" `.venv/bin/python benchmarks/acceptance.py{' --quick' if options.quick else ''}`;"
        f" baseline {options.baseline}, now {git_head()}, median of {runs} runs a side,"
        " interleaved.\n",
        "| scenario | baseline wall | now wall | ratio | baseline own | now own | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    table = [*head, *lines] if lines else head[:1]
    print("\n" + "\n".join([*table, *([""] if scale else []), *scale]))


def git_head() -> str:
    done = subprocess.run(["git", "-C", str(bench.ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dirty = subprocess.run(["git", "-C", str(bench.ROOT), "status", "--porcelain", "src"],
                           capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    return done.stdout.strip() + (" with uncommitted changes to src/" if dirty else "")


if __name__ == "__main__":
    main()
