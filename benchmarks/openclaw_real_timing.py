"""`memfuse cron --format openclaw --install`, again, and `--remove`, timed against the real
`openclaw` package and a Gateway started as tests/integration/test_openclaw_real.py starts it
(opt-in: `openclaw` 2026.9.x and Node >= 24.16 on PATH). SRC: the memfuse `src` to run.

    PATH=/path/to/node24/bin:/path/to/openclaw/bin:$PATH \
        .venv/bin/python benchmarks/openclaw_real_timing.py src
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.integration.test_openclaw_real import running_gateway  # noqa: E402


def main() -> None:
    src = str(Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "src").absolute())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        with running_gateway(folder) as gateway_env:
            ws = folder / "ws"
            (ws / "memory").mkdir(parents=True)
            env = {**gateway_env, "PYTHONPATH": src}
            for label, arg in (("install", "--install"), ("again", "--install"),
                               ("remove", "--remove")):  # fmt: skip
                began = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "memfuse", "cron", "--format", "openclaw", "-w",
                     str(ws), arg, "--json"], env=env, capture_output=True, text=True,
                    check=False,
                )  # fmt: skip
                wall = time.perf_counter() - began
                print(f"{label:8} {wall:5.1f} s  exit {done.returncode}  load"
                      f" {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
