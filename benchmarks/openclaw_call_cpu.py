"""The CPU of each kind of `openclaw` call memfuse makes, against the real package and a
scratch Gateway started as tests/integration/test_openclaw_real.py starts it: the CLI's own
(user + system, of the process and its children) and the Gateway's for the same call (its
processes found by their scratch HOME). Every call starts Node; at load a call's wall is
its CPU times the share of a core it gets, so the heavy call on a path sets its wall.

    PATH=/path/to/node24/bin:$PATH MEMFUSE_OPENCLAW=/path/to/openclaw \
        .venv/bin/python benchmarks/openclaw_call_cpu.py --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.integration.test_openclaw_real import running_gateway  # noqa: E402

PAGE = '{"includeDisabled":true,"limit":200,"offset":0}'
SET = '[{"path":"hooks.internal.entries.memfuse-recent.enabled","value":true}]'


def gateway_cpu(home: str) -> float:
    """CPU seconds so far of the processes whose environment names this scratch HOME."""
    total = 0.0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if f"HOME={home}\0".encode() not in Path(f"/proc/{pid}/environ").read_bytes():
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def timed(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    before, gateway = resource.getrusage(resource.RUSAGE_CHILDREN), gateway_cpu(env["HOME"])
    began = time.perf_counter()
    done = subprocess.run(["openclaw", *argv], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cli = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    served = gateway_cpu(env["HOME"]) - gateway
    print(f"{wall:5.1f} s wall {cli:5.2f} s CLI {served:5.2f} s Gateway  exit {done.returncode}"
          f"  load {os.getloadavg()[0]:5.2f}  openclaw {' '.join(argv)[:60]}", flush=True)  # fmt: skip
    return done


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, running_gateway(Path(tmp), {}) as env:
        for _ in range(options.rounds):
            timed(["cron", "list", "--all", "--json"], env)
            timed(["gateway", "call", "cron.list", "--json", f"--params={PAGE}"], env)
            timed(["config", "set", f"--batch-json={SET}"], env)
            timed(["config", "unset", "hooks"], env)
            got = timed(["gateway", "call", "config.get", "--json", "--params={}"], env)
            patch = {"raw": json.dumps({"hooks": {"internal": {"enabled": True}}}),
                     "baseHash": json.loads(got.stdout).get("hash")}  # fmt: skip
            timed(
                ["gateway", "call", "config.patch", "--json", f"--params={json.dumps(patch)}"], env
            )
            got = timed(["gateway", "call", "config.get", "--json", "--params={}"], env)
            patch = {"raw": json.dumps({"hooks": None}), "baseHash": json.loads(got.stdout)["hash"]}
            timed(
                ["gateway", "call", "config.patch", "--json", f"--params={json.dumps(patch)}"], env
            )


if __name__ == "__main__":
    main()
