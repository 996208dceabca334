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
PYTHONPATH (benchmarks/acceptance.py's machinery, which checks each side loads its own code).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

import acceptance
import bench

BASELINE = "af1b477"  # main before issue 41's work
BULLETS = 1000


def sync_run(side: acceptance.Side, n: int) -> tuple[float, dict[str, Any]]:
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
    with acceptance.baseline_tree(options.baseline) as tree, tempfile.TemporaryDirectory() as tmp:
        sides = [
            acceptance.Side("baseline", tree / "src", Path(tmp) / "baseline"),
            acceptance.Side("now", bench.ROOT / "src", Path(tmp) / "now"),
        ]
        for side in sides:
            acceptance.check_source(side)
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
