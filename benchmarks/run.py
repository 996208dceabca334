"""memfuse's benchmarks, one entry point: which one backs which section of docs/, through which
door a user or an agent meets it, and what 10x and 100x the input does; each run as the machine
is and with every core saturated, side by side.

    .venv/bin/python benchmarks/run.py                  # the list
    .venv/bin/python benchmarks/run.py NAME [NAME ...]  # each one loaded, then as the machine is
    .venv/bin/python benchmarks/run.py all --quiet      # every timed one, no busy loops (the lead,
                                                        # on a quiet machine: the docs' figures)
    .venv/bin/python benchmarks/run.py NAME -- ARGS     # ARGS passed on to the script

"Loaded" starts one busy loop (`python -c 'while 1: pass'`) per core before the benchmark and
stops them after it, by their own process ids; "as is" runs with none of its own (on a shared
machine that is not quiet: the 1-minute load average is printed beside each run). A benchmark
that writes its section of docs/ writes it from the unloaded run only (the loaded one gets its
`--no-write`). Each run's output is kept in .benchmarks/NAME-loaded.log and NAME-as-is.log
(gitignored). Benchmarks that count rather than time (calls, agreements) run once.
benchmarks/sections.py is not a benchmark: it replaces one section of a docs page.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / ".benchmarks"


@dataclass(frozen=True)
class Bench:
    name: str
    script: str  # under benchmarks/, with its default arguments
    door: str  # how a user or an agent meets what it measures
    backs: str  # the docs section whose figures it produces
    scale: str  # what 10x and 100x the input does
    timed: bool = True  # False: it counts, and one run says all
    writes: bool = False  # it replaces its docs section unless given --no-write
    beside: str = ""  # for a function-level figure: the end-to-end benchmark it stands beside
    opt_in: bool = False  # needs what a checkout does not hold: not part of `all`


BENCHES = [
    Bench(
        "bench",
        "bench.py --bullets 1000",
        "CLI: `memfuse sync` (mcporter and session), `memfuse surface`, `memfuse status`, `--help`",
        "performance.md: 1000 bullets; Rebuilding the index; Start-up, parsing, memory, surface",
        "sync grows with the bullets it sends, one store call each (10 000: 75 s, ~all the store's);"
        " a plain sync with nothing new stats each journal: linear in the files",
        writes=True,
    ),
    Bench(
        "year",
        "bench.py --only year",
        "CLI: plain `memfuse sync` over a year, `memfuse recall`, `recall --batch`",
        "performance.md: A year of journals",
        "10x (146 000 bullets) is measured in the section: a question's own time grew 6.7x,"
        " linear in the bullets its words match; 100x not run (~1 s a question by that line)",
        writes=True,
    ),
    Bench(
        "scale",
        "bench.py --only scale",
        "CLI: `memfuse surface`, plain `memfuse sync`, the state folder after 30 syncs",
        "performance.md: 100 large journals",
        "memfuse's part grows with the journal files (a stat each) and the last days' journals'"
        " size, linearly; surface asks the store for a bounded number of candidates",
        writes=True,
    ),
    Bench(
        "bounds",
        "bench.py --only bounds",
        "CLI: `memfuse recall --batch --without store`, `memfuse sync` over touched journals",
        "performance.md: What one question and one refresh cost",
        "1x and 10x bullets are its rows (a question stays bounded: at most 32 terms, 100 000"
        " rows); 20 000 and 100 000 touched journals: linear in the files",
        writes=True,
    ),
    Bench(
        "house_speed",
        "house_speed.py --rounds 3",
        "CLI: `memfuse sync` of 1 000 new bullets against a raw MCP session sending the same",
        "performance.md: Issue 41's speed line; Meaning off the lock",
        "both sides grow with the bullets, one remember each: the ratio holds at 10x and 100x"
        " (the rebuild of 10 000 in `bench`: 1.07x)",
    ),
    Bench(
        "index_tail",
        "index_tail.py --mib 1 8 16 --notes 3",
        "CLI: a cold `memfuse recall` right after a note to a 1-16 MiB journal",
        "performance.md: Meaning off the lock, and the journal's tail; Issues 46 and 49 on a"
        " quiet machine",
        "the refresh reads what was appended (bytes of the note), not the journal: flat from"
        " 1 to 16 MiB; the question grows with the index",
    ),
    Bench(
        "journal_costs",
        "journal_costs.py 1 10 100",
        "function: `memfuse.workspace.journal.read` on one journal, by its shape",
        "performance.md: Reading one journal, by its shape; reliability.md (the deep shapes)",
        "its columns are 1x, 10x and 100x (0.16, 1.6, 16 MiB, the read cap): every shape"
        " linear in its bytes",
        beside="serve_flood",
    ),
    Bench(
        "readers",
        "readers.py",
        "function: every journal read by the plain reader and by markdown-it alone",
        "performance.md: One journal reader or two",
        "both readers are linear in the bytes; the plain one's margin holds at 10x and 100x",
        beside="house_speed",
    ),
    Bench(
        "session_sdk",
        "session_sdk.py",
        "CLI: `memfuse sync --all --transport session`, its own client against the MCP SDK's",
        "performance.md: The session transport against the MCP SDK's client",
        "both grow with the calls, one each; the SDK's fixed cost (its import, ~0.6-1.3 s) fades"
        " at 10x and 100x, its ~0.5 ms a call of validation does not",
    ),
    Bench(
        "store_merges",
        "store_merges.py",
        "CLI: `memfuse sync --json` calls and `status -q`, editing merged bullets",
        "reliability.md: edited near-duplicates the store merged",
        "counts, not time: a family-7 edit costs a fixed few calls at 600 copies and at 10x",
        timed=False,
    ),
    Bench(
        "journal_fuzz",
        "journal_fuzz.py 50 2000",
        "function: memfuse's journal reader against commonmark.js on generated journals",
        "reliability.md: the longer fuzz",
        "agreements, not time: 10x the seeds is 10x the run, linearly",
        timed=False,
    ),
    Bench(
        "journal_draws",
        "journal_draws.py 20",
        "function: `memfuse.workspace.journal.read` on test_journal's drawn journals",
        "performance.md: The parsing property's 3.3 s",
        "the slowest drawn shapes at 1x, 10x and 100x: linear; `0 big` the dense one at 2 and"
        " 8 MiB, the collector on and off",
        beside="journal_costs",
    ),
    # Owned by other engineers this turn: listed here, run as they are.
    Bench(
        "note_cost",
        "note_cost.py",
        "function: `append_note` as serve runs it",
        "performance.md: One note, with today's journal at 1, 8 and 16 MiB",
        "its rows are 1, 8, 16 MiB: a later note reads the last note's line on, flat",
        beside="serve_bench",
    ),
    Bench(
        "serve_bench",
        "serve_bench.py --questions 50",
        "MCP: `recall` tool calls to a warm `memfuse serve` over stdio",
        "performance.md: memfuse serve, warm",
        "see its docstring",
        writes=True,
    ),
    Bench(
        "serve_flood",
        "serve_flood.py",
        "MCP: serve's `status`/`where`/`recall` tool calls",
        "performance.md (issue 39, family 8)",
        "see its docstring",
    ),
    Bench(
        "semantic_bench",
        "semantic_bench.py",
        "CLI: the recall index by meaning at 1 000-100 000 bullets",
        "performance.md: Recall by meaning",
        "its scales are 1x, 10x, 100x",
        writes=True,
    ),
    Bench(
        "meaning_runs",
        "meaning_runs.py --rounds 3",
        "CLI: `memfuse sync`/rebuild/tidy, meaning on and off",
        "performance.md: Meaning off the lock",
        "see its docstring",
    ),
    Bench(
        "model_cold",
        "model_cold.py --rounds 5",
        "CLI: a cold process's first vector",
        "performance.md: The model from cold",
        "independent of the input's size",
        writes=True,
    ),
    Bench(
        "question_bound",
        "question_bound.py --bullets 1000 146000 --rounds 2",
        "CLI: a cold `memfuse recall` after a sync of 300 new bullets",
        "performance.md: Cold vectors",
        "its rows are 1x and 146x the bullets",
    ),
    Bench(
        "recall_fusion_cost",
        "recall_fusion_cost.py",
        "function: the fusion's full match and prior over 146 000 rows",
        "performance.md (issue 49's fusion)",
        "see its docstring",
        writes=True,
        beside="question_bound",
    ),
    Bench(
        "recall_eval",
        "recall_eval.py",
        "CLI: `memfuse recall` on the bilingual set",
        "recall-quality.md",
        "quality, not time",
        timed=False,
        writes=True,
    ),
    Bench(
        "recall_bilingual",
        "recall_bilingual.py",
        "CLI/engine: the bilingual sets",
        "recall-quality.md",
        "quality, not time",
        timed=False,
        writes=True,
    ),
    Bench(
        "recall_fusion",
        "recall_fusion.py",
        "engine: fusions compared on LoCoMo",
        "recall-quality.md",
        "quality, not time",
        timed=False,
        writes=True,
    ),
    Bench(
        "recall_locomo",
        "recall_locomo.py",
        "CLI: `memfuse recall` on LoCoMo (needs DATA)",
        "recall-quality.md: LoCoMo",
        "quality, not time",
        timed=False,
        writes=True,
        opt_in=True,
    ),
    Bench(
        "openclaw_install",
        "openclaw_install_bench.py --delay 2",
        "CLI: `memfuse cron --format openclaw --install/--remove` (stand-in openclaw)",
        "performance.md: OpenClaw install and removal",
        "linear in the agents",
    ),
    Bench(
        "openclaw_real",
        "openclaw_real_timing.py src",
        "CLI: the same against the real openclaw (opt-in)",
        "performance.md: OpenClaw install and removal",
        "linear in the agents",
        opt_in=True,
    ),
]
BY_NAME = {b.name: b for b in BENCHES}


def load_average() -> str:
    return f"{os.getloadavg()[0]:.1f}"


@contextmanager
def saturated(loops: int) -> Iterator[None]:
    """`loops` busy loops for the block's length, each stopped by its own process id."""
    busy = [
        subprocess.Popen([sys.executable, "-c", "while 1: pass"], stdin=subprocess.DEVNULL)
        for _ in range(loops)
    ]
    try:
        time.sleep(1)  # let them take the cores before the benchmark starts
        yield
    finally:
        for process in busy:
            process.kill()
            process.wait()


def run_one(bench: Bench, label: str, loops: int, extra: list[str]) -> tuple[float, int, str]:
    argv = [sys.executable, str(ROOT / "benchmarks" / bench.script.split()[0])]
    argv += extra or bench.script.split()[1:]
    if bench.writes and loops:
        argv.append("--no-write")
    LOGS.mkdir(exist_ok=True)
    log = LOGS / f"{bench.name}-{label}.log"
    print(f"==> {bench.name} ({label}, load {load_average()}): {' '.join(argv[1:])}", flush=True)
    with saturated(loops):
        load = load_average()
        started = time.monotonic()
        with log.open("w") as out:
            process = subprocess.Popen(
                argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            assert process.stdout is not None
            for line in process.stdout:
                sys.stdout.write(line)
                out.write(line)
            code = process.wait()
        seconds = time.monotonic() - started
    return seconds, code, f"load {load} → {load_average()}"


def side_by_side(name: str) -> None:
    """The two runs' tables merged cell by cell, `as is / loaded`, where their rows match."""
    logs = [LOGS / f"{name}-{label}.log" for label in ("as-is", "loaded")]
    if not all(log.exists() for log in logs):
        return
    quiet, loaded = ([line for line in log.read_text().splitlines() if line.startswith("|")]
                     for log in logs)  # fmt: skip
    if not quiet or len(quiet) != len(loaded):
        return
    print(f"\n{name}: as is / loaded")
    for a, b in zip(quiet, loaded, strict=True):
        cells = [(x.strip(), y.strip()) for x, y in zip(a.split("|"), b.split("|"), strict=False)]
        print(
            " | ".join(
                x if x == y or i == 1 else f"{x} / {y}" for i, (x, y) in enumerate(cells)
            ).strip()
        )


def listing() -> None:
    for b in BENCHES:
        print(f"{b.name:<20} {b.door}")
        print(f"{'':<20} backs: {b.backs}")
        print(f"{'':<20} at 10x/100x: {b.scale}")
        beside = f"; function-level, beside `{b.beside}`" if b.beside else ""
        print(f"{'':<20} run: benchmarks/{b.script}{beside}")


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run, or `all` (the timed ones)")
    parser.add_argument("--quiet", action="store_true", help="no busy loops: one run as is")
    parser.add_argument("--loaded", action="store_true", help="only the saturated run")
    options = parser.parse_args(argv)
    if not options.names:
        listing()
        return
    everything = [b.name for b in BENCHES if b.timed and not b.opt_in]
    names = everything if options.names == ["all"] else options.names
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        parser.error(f"unknown: {', '.join(unknown)} (run it without arguments for the list)")
    cores = os.cpu_count() or 1
    rows = []
    for name in names:
        bench = BY_NAME[name]
        runs = [("as-is", 0)]
        if bench.timed and not options.quiet:
            runs = [("loaded", cores)] if options.loaded else [("loaded", cores), ("as-is", 0)]
        for label, loops in runs:
            seconds, code, load = run_one(bench, label, loops, extra)
            rows.append((name, label, seconds, code, load))
    print("\n| benchmark | run | wall (s) | exit | load average (before → after) |")
    print("|---|---|---:|---:|---|")
    for name, label, seconds, code, load in rows:
        print(f"| {name} | {label} | {seconds:.0f} | {code} | {load} |")
    for name in dict.fromkeys(names):
        side_by_side(name)
    print(f"\nEach run's output: {LOGS}/NAME-RUN.log")
    sys.exit(1 if any(code for *_, code, _load in rows) else 0)


if __name__ == "__main__":
    main()
