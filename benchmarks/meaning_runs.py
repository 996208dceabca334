"""Issue 49's run lines, side by side with MEMFUSE_SEMANTIC=off: a sync of 1 000 new bullets
(which embeds them once it let go of the lock: decision 650) and a rebuild of 1 000 after the
database was lost, each against a raw stdio session sending the same remembers, and the night's
tidy, which embeds what the sync's count left (none here).

    .venv/bin/python benchmarks/meaning_runs.py              # 3 rounds
    .venv/bin/python benchmarks/meaning_runs.py --rounds 5

Each round, for meaning on (the `semantic` extra installed and used) and off in turn (the order
swapped each round, so that the load of a shared machine falls on both): a fresh reference
server and workspace of 1 000 bullets (bench.py's, 40 a journal); `memfuse sync --all` timed,
with its CPU seconds (the children's, the store's included) and the texts it embedded, then a
raw session of the same remembers into another fresh server; the database deleted and
the next plain sync timed (the rebuild), with another raw session; then `memfuse tidy` timed,
with the texts its step after the lock embedded (`recall_index_embedded`) and its CPU seconds (the
children's, the store's included). The ratios are each
run's wall over the raw session's next to it; each figure is the median of the rounds.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import bench


def env_of(meaning: bool, state: Path) -> dict[str, str]:
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    env.pop("MEMFUSE_SEMANTIC", None)
    if not meaning:
        env["MEMFUSE_SEMANTIC"] = "off"
    return env


def raw(root: Path, label: str) -> float:
    server = bench.reference_server(root / label, "raw")
    ws, _last = bench.make_workspace(root / label, 1000)
    seconds, calls = bench.raw_session(server, ws)
    assert calls == 1000, calls
    return seconds


def tidy(server: bench.Server, ws: Path, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    import json

    argv = [bench.MEMFUSE, "tidy", "-w", str(ws), "--mcporter", bench.MCPORTER,
            "--mcporter-config", str(server.config), "--server", server.name,
            "--now", "2026-12-01T03:00", "--json"]  # fmt: skip
    seconds, done = bench.timed(argv, env=env)
    return seconds, json.loads(done.stdout)


def cpu() -> float:
    """CPU seconds of the finished children so far (memfuse and the store it ran)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def one(root: Path, meaning: bool) -> dict[str, float]:
    label = "on" if meaning else "off"
    env = env_of(meaning, root / f"{label}-state")
    server = bench.reference_server(root / label, "sync")
    ws, _last = bench.make_workspace(root / label, 1000)
    before = cpu()
    synced, envelope = bench.sync_envelope(server, ws, "--all", env=env)
    sync_cpu = cpu() - before
    assert envelope["data"]["counts"]["added"] == 1000, envelope["data"]["counts"]
    sync_raw = raw(root, f"{label}-raw1")
    Path(server.env["AGENT_MEMORY_DB"]).unlink()
    rebuilt, again = bench.sync_envelope(server, ws, env=env)
    assert again["data"]["counts"]["restored"] == 1000, again["data"]["counts"]
    rebuild_raw = raw(root, f"{label}-raw2")
    before = cpu()
    tidied, night = tidy(server, ws, env)
    tidy_cpu = cpu() - before
    return {
        "sync": synced, "sync_raw": sync_raw, "sync_own": (envelope["duration_ms"]
        - envelope["store_ms"]) / 1000, "rebuild": rebuilt, "rebuild_raw": rebuild_raw,
        "tidy": tidied, "tidy_cpu": tidy_cpu, "embedded": float(night["data"].get("recall_index_embedded", 0)),
        "sync_cpu": sync_cpu, "sync_embedded": float(envelope["data"].get("recall_index_embedded", 0)),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M')}")
    found: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="memfuse-meaning-runs-") as tmp:
        for n in range(options.rounds):
            for meaning in (True, False) if n % 2 == 0 else (False, True):
                got = one(Path(tmp) / f"r{n}", meaning)
                found[meaning].append(got)
                print(f"round {n + 1}, meaning {'on' if meaning else 'off'}: {got}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    print("| meaning | sync of 1 000 (s) | its own (s) | its CPU (s) | texts it embedded | × raw"
          " | rebuild of 1 000 (s) | × raw | tidy (s) | tidy's CPU (s) | texts tidy embedded |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for meaning in (True, False):
        runs = found[meaning]

        def med(key: str, runs: list[dict[str, float]] = runs) -> float:
            return statistics.median(r[key] for r in runs)

        sync_x = [r["sync"] / r["sync_raw"] for r in runs]
        rebuild_x = [r["rebuild"] / r["rebuild_raw"] for r in runs]
        print(f"| {'on' if meaning else 'off (MEMFUSE_SEMANTIC=off)'} | {med('sync'):.2f} |"
              f" {med('sync_own'):.2f} | {med('sync_cpu'):.2f} | {med('sync_embedded'):.0f} |"
              f" {statistics.median(sync_x):.2f}×"
              f" ({min(sync_x):.2f}–{max(sync_x):.2f}) | {med('rebuild'):.2f} |"
              f" {statistics.median(rebuild_x):.2f}× ({min(rebuild_x):.2f}–{max(rebuild_x):.2f})"
              f" | {med('tidy'):.2f} | {med('tidy_cpu'):.2f} | {med('embedded'):.0f} |")  # fmt: skip


if __name__ == "__main__":
    main()
