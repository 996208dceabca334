"""`memfuse cron --format openclaw --install` / `--remove`: how many `openclaw` calls each
makes, in how many rounds one waits on another, and its wall time against the stand-in
(tests/fake_openclaw.py) where every call first sleeps DELAY seconds for Node's start.

    .venv/bin/python benchmarks/openclaw_install_bench.py --delay 1
    .venv/bin/python benchmarks/openclaw_install_bench.py --delay 1 --src /work/main/src
    .venv/bin/python benchmarks/openclaw_install_bench.py --delay 2 --agents

`--agents`: two agents (`home`, `work`) with `--all-agents`, the way the issue measured it.

`--src` runs another checkout's memfuse (its `src`) against the same stand-in, for a before
and after. A sleep overlaps perfectly; Node's start is CPU work, so on a real machine calls
side by side overlap only as far as it has free cores. Nothing is extrapolated: the figures
are the stand-in's.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str], env: dict[str, str]) -> tuple[float, int]:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "memfuse", *args], env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"memfuse {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return time.perf_counter() - began, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=1.0, help="seconds each call sleeps")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="memfuse's src to run")
    parser.add_argument("--agents", action="store_true", help="two agents, --all-agents")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        home, ws, bin_dir = folder / "home", folder / "home" / "ws", folder / "bin"
        for made in (ws / "memory", bin_dir):
            made.mkdir(parents=True)
        script = bin_dir / "openclaw"
        script.write_text(
            f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "tests" / "fake_openclaw.py"}" "$@"\n'
        )
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        env = {**os.environ, "HOME": str(home), "PATH": f"{bin_dir}:{os.environ['PATH']}",
               "PYTHONPATH": str(options.src), "FAKE_OPENCLAW_STATE": str(folder / "state.json"),
               "FAKE_OPENCLAW_DELAY": str(options.delay), "TZ": "Etc/UTC"}  # fmt: skip
        who = ["-w", str(ws)]
        if options.agents:
            (home / "work" / "memory").mkdir(parents=True)
            (home / ".openclaw").mkdir()
            roster = {name: {"workspace": str(home / name)} for name in ("ws", "work")}
            (home / ".openclaw" / "openclaw.json").write_text(
                json.dumps({"agents": {"entries": {"home": roster["ws"], "work": roster["work"]}}})
            )
            entry = {"command": "node", "args": ["/nonexistent/server.js"],
                     "env": {"AGENT_MEMORY_DB": str(home / "agent-memory.db"),
                             "AGENT_MEMORY_WORKSPACE": str(ws)}}  # fmt: skip
            (home / ".mcporter").mkdir()
            (home / ".mcporter" / "mcporter.json").write_text(
                json.dumps({"mcpServers": {"agent-memory": entry}})
            )
            who = ["--all-agents"]
        calls = folder / "calls.jsonl"
        print(f"src {options.src}, {options.delay:g} s a call; load {os.getloadavg()[0]:.2f}")
        for label, args in (("install", ["--install"]), ("install again", ["--install"]),
                            ("remove", ["--remove"]), ("remove again", ["--remove"])):  # fmt: skip
            calls.unlink(missing_ok=True)
            wall, _ = run(["cron", "--format", "openclaw", *args, *who], env)
            made = [json.loads(line) for line in calls.read_text().splitlines()]
            rounds = (wall - 0.0) / options.delay if options.delay else 0
            print(f"  {label:14} {len(made):2} calls  {wall:6.2f} s  (~{rounds:.1f} delays)")


if __name__ == "__main__":
    main()
