"""`memfuse cron --format openclaw --install`, again, and `--remove`, timed against the real
`openclaw` package and a Gateway started as tests/integration/test_openclaw_real.py starts it,
for one workspace (`-w`) or two agents (`--agents`: `--all-agents` over `home` and `work`),
each `openclaw` call memfuse makes timed by a shim in front of the CLI (opt-in: `openclaw`
2026.9.x and Node >= 24.16 on PATH, or MEMFUSE_OPENCLAW naming the CLI). SRC: the memfuse
`src` to run.

    PATH=/path/to/node24/bin:$PATH MEMFUSE_OPENCLAW=/path/to/openclaw \
        .venv/bin/python benchmarks/openclaw_real_timing.py src --agents --rounds 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.integration.test_openclaw_real import (  # noqa: E402
    running_gateway,
    store_entry_for,
)

SHIM = """#!/bin/sh
began=$(date +%s.%N)
"{real}" "$@"
code=$?
printf '%s %s %s\\n' "$began" "$(date +%s.%N)" "$*" >> "{log}"
exit $code
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("src", nargs="?", default=str(ROOT / "src"))
    parser.add_argument("--agents", action="store_true", help="two agents, --all-agents")
    parser.add_argument("--rounds", type=int, default=1)
    options = parser.parse_args()
    src = str(Path(options.src).absolute())
    real = os.environ.get("MEMFUSE_OPENCLAW") or shutil.which("openclaw")
    if real is None:
        raise SystemExit("no openclaw: put it on PATH or set MEMFUSE_OPENCLAW")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        spaces = {name: folder / f"{name}-ws" for name in ("home", "work")}
        for workspace in spaces.values():
            (workspace / "memory").mkdir(parents=True)
        config = None
        if options.agents:
            config = {"agents": {
                "defaults": {"systemAgent": {"agentId": "home"}},
                "entries": {name: {"workspace": str(ws)} for name, ws in spaces.items()},
            }}  # fmt: skip
        with running_gateway(folder, config) as gateway_env:
            shim, log = folder / "shim", folder / "calls.log"
            shim.mkdir()
            (shim / "openclaw").write_text(SHIM.format(real=real, log=log))
            (shim / "openclaw").chmod(0o755)
            env = {**gateway_env, "PYTHONPATH": src, "PATH": f"{shim}:{gateway_env['PATH']}"}
            store_entry_for(env, spaces["home"])
            who = ["--all-agents"] if options.agents else ["-w", str(spaces["home"])]
            print(f"src {src}; {'two agents' if options.agents else 'one workspace'}")
            for _ in range(options.rounds):
                for label, arg in (("install", "--install"), ("again", "--install"),
                                   ("remove", "--remove")):  # fmt: skip
                    log.unlink(missing_ok=True)
                    began, epoch = time.perf_counter(), time.time()
                    done = subprocess.run(
                        [sys.executable, "-m", "memfuse", "cron", "--format", "openclaw", *who,
                         arg, "--json"], env=env, capture_output=True, text=True, check=False,
                    )  # fmt: skip
                    wall = time.perf_counter() - began
                    calls = log.read_text().splitlines() if log.exists() else []
                    print(f"{label:8} {wall:5.1f} s  exit {done.returncode}  {len(calls)} calls"
                          f"  load {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
                    if done.returncode != 0:
                        print(done.stdout[-2000:], done.stderr[-2000:])
                    for line in sorted(calls):  # each call's start and end in the command
                        start, end, argv = line.split(" ", 2)
                        at, to = float(start) - epoch, float(end) - epoch
                        print(f"    {at:5.1f}-{to:5.1f} s ({to - at:4.1f})  openclaw {argv[:80]}")


if __name__ == "__main__":
    main()
