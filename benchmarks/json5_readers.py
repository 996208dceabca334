"""What reading openclaw.json costs with each JSON5 reader: CPU seconds to parse a 250 KiB
configuration written as OpenClaw's docs write it (unquoted keys, single quotes, comments,
trailing commas), and the same as strict JSON, median of ROUNDS (issue 55).

    .venv/bin/python benchmarks/json5_readers.py --rounds 5

`json5` is in memfuse's dependencies before this change; `pyjson5` after; `ujson5` is
tried when installed (it refuses `+Infinity`, which JSON5 allows).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any


def config_text(size: int) -> tuple[str, str]:
    """(JSON5, the same as strict JSON) of about `size` bytes: a roster of agents."""
    parts, plain, n = ["{\n  // agents, as the docs write them\n  agents: { entries: {\n"], {}, 0
    while sum(map(len, parts)) < size:
        agent = f"agent{n}"
        parts.append(
            f"    {agent}: {{ workspace: '~/ws/{agent}', // its own\n"
            f"      tools: {{ deny: ['memfuse-x{n}__*', 'exec',], }}, model: 'stub/m', }},\n"
        )
        plain[agent] = {"workspace": f"~/ws/{agent}", "tools": {"deny": [f"memfuse-x{n}__*",
                        "exec"]}, "model": "stub/m"}  # fmt: skip
        n += 1
    parts.append("  } },\n}\n")
    return "".join(parts), json.dumps({"agents": {"entries": plain}}, indent=2)


def cpu(parse: Callable[[str], Any], text: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        began = time.process_time()
        parse(text)
        times.append(time.process_time() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kib", type=int, default=250)
    options = parser.parse_args()
    five, strict = config_text(options.kib << 10)
    print(f"{len(five) >> 10} KiB JSON5 ({len(strict) >> 10} KiB as JSON), load"
          f" {os.getloadavg()[0]:.2f}, median of {options.rounds} (CPU s)")  # fmt: skip
    print(f"  json (stdlib), the strict JSON:  {cpu(json.loads, strict, options.rounds):.4f}")
    for name, call in (("pyjson5", "decode"), ("json5", "loads"), ("ujson5", "loads")):
        try:
            parse = getattr(importlib.import_module(name), call)
        except ImportError:
            print(f"  {name}: not installed")
            continue
        rounds = 1 if name == "json5" else options.rounds  # seconds a round
        for label, text in (("JSON5", five), ("JSON", strict)):
            try:
                print(f"  {name} {label}: {cpu(parse, text, rounds):.4f}")
            except ValueError as exc:
                print(f"  {name} {label}: refused ({str(exc)[:80]})")


if __name__ == "__main__":
    main()
