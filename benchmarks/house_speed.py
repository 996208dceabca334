"""Issue 41's speed line: `memfuse sync` of 1 000 new bullets into a fresh store, as a multiple
of a raw stdio session sending the same 1 000 remembers, before the house's part 2 and now.

Run from a set-up checkout (`scripts/setup.sh`):

    .venv/bin/python benchmarks/house_speed.py             # 5 rounds
    .venv/bin/python benchmarks/house_speed.py --rounds 3  # to try it out

The store is the reference server (`python -m memfuse.refserver`): agent-memory 2.2 itself is
not installable from this machine's package registry. Each round times, in turn, the baseline's
sync, a raw session, now's sync and another raw session (then the other way round in the next
round), each into a fresh database with a fresh workspace of 1 000 bullets (40 a journal), so
that the load of a shared machine falls on every side; a sync's ratio is its wall time over
the raw session's next to it, and each figure is the median of the rounds. A second plain sync
with nothing new is checked to make one store call. The baseline's source is checked out with
`git worktree add --detach` into a temporary folder and run with that `src/` first on
PYTHONPATH, each side checked to load its own code (`check_source`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bench

BASELINE = "af1b477"  # main before issue 41's work
BULLETS = 1000


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


def sync_run(side: Side, n: int) -> tuple[float, dict[str, Any]]:
    folder = side.root / f"sync{n}"
    server = bench.reference_server(folder, "sync")
    ws, _last = bench.make_workspace(folder, BULLETS)
    env = side.state(f"sync{n}")
    seconds, envelope = bench.sync_envelope(server, ws, "--all", env=env)
    assert envelope["data"]["counts"]["added"] == BULLETS, envelope["data"]["counts"]
    _again, second = bench.sync_envelope(server, ws, env=env)
    assert second["data"]["calls"] == 1, second["data"]["calls"]
    return seconds, envelope


def raw_run(root: Path, label: str) -> float:
    folder = root / label
    server = bench.reference_server(folder, "raw")
    ws, _last = bench.make_workspace(folder, BULLETS)
    seconds, calls = bench.raw_session(server, ws)
    assert calls == BULLETS, calls
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare against")
    options = parser.parse_args()
    with baseline_tree(options.baseline) as tree, tempfile.TemporaryDirectory() as tmp:
        sides = [
            Side("baseline", tree / "src", Path(tmp) / "baseline"),
            Side("now", bench.ROOT / "src", Path(tmp) / "now"),
        ]
        for side in sides:
            check_source(side)
        ratios: dict[str, list[float]] = {side.name: [] for side in sides}
        walls: dict[str, list[float]] = {side.name: [] for side in sides}
        raws: list[float] = []
        own: dict[str, list[float]] = {side.name: [] for side in sides}
        for n in range(options.rounds):
            order = sides if n % 2 == 0 else sides[::-1]
            for side in order:
                seconds, envelope = sync_run(side, n)
                raw = raw_run(Path(tmp) / "raw", f"{side.name}{n}")
                raws.append(raw)
                walls[side.name].append(seconds)
                ratios[side.name].append(seconds / raw)
                own[side.name].append((envelope["duration_ms"] - envelope["store_ms"]) / 1000)
                print(f"round {n + 1}: {side.name} {seconds:.2f} s, raw {raw:.2f} s,"
                      f" {seconds / raw:.2f}×", flush=True)  # fmt: skip
        print(f"\n{BULLETS} new bullets, reference server, session transport;"
              f" median of {options.rounds} rounds\n")  # fmt: skip
        print("| side | sync wall (s) | memfuse's own (s) | × the raw session (median) | range |")
        print("|---|---:|---:|---:|---|")
        for side in sides:
            r = ratios[side.name]
            print(
                f"| {side.name} ({options.baseline if side.name == 'baseline' else 'HEAD'}) |"
                f" {statistics.median(walls[side.name]):.2f} |"
                f" {statistics.median(own[side.name]):.2f} | {statistics.median(r):.2f}× |"
                f" {min(r):.2f}–{max(r):.2f}× |"
            )
        print(f"| raw stdio session | {statistics.median(raws):.2f} | – | 1.00× | – |")


if __name__ == "__main__":
    main()
