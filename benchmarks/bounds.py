"""What one recall question and one refresh of the local index cost at their worst (issue 33),
a section of benchmarks/bench.py (`--only bounds`).

Questions are asked of the journals alone (`recall --batch --without store`): memfuse's own
time is then the envelope's whole duration. Three kinds, over a year (14 600 bullets) and ten
(146 000) of the generator's journals: three words of its 36-word vocabulary (each word in a
sixth of the bullets, so a question matches most of them), 1 799 characters of that vocabulary
and its Chinese words (every term common), and 1 799 characters of numbers (hundreds of rare
terms). Then N empty journals, each touched (its mtime moved) before a plain `memfuse sync`
with nothing to send, and touched again before one `memfuse recall --without store`, whose
duration is the index's refresh of them all and one question.

With `MEMFUSE_BENCH_BEFORE=SRC` in the environment every row is measured a second time with the
memfuse of another source tree (a checkout's `src/`, put first on PYTHONPATH), for a
before/after table from one run, e.g. against main as it was before issue 33:

    git archive 5354185 | tar -x -C /tmp/memfuse-main-5354185   # into an empty folder
    MEMFUSE_BENCH_BEFORE=/tmp/memfuse-main-5354185/src .venv/bin/python benchmarks/bench.py --only bounds
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

QUESTION = 1799  # characters: the long question of issue 33
THREE_WORD = 100
LONG = 20
EMPTY = (20_000, 100_000)
NOW = "2026-11-30T23:00"


def long_question(rng: random.Random, words: list[str]) -> str:
    text = ""
    while len(text) < QUESTION:
        text += rng.choice(words) + " "
    return text[:QUESTION].strip()


def asked(bench: ModuleType, ws: Path, questions: list[str], env: dict[str, str]) -> list[int]:
    """memfuse's own milliseconds for each question of one batch, sorted."""
    argv = [bench.MEMFUSE, "recall", "--batch", "-w", str(ws), "--without", "store", "--now", NOW]
    _s, done = bench.timed(argv, stdin=("\n".join(questions) + "\n").encode(), env=env)
    envelopes = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(envelopes) == len(questions), done.stderr[-500:]
    assert all(e["status"] == "ok" for e in envelopes), envelopes[0]
    return sorted(int(e["duration_ms"]) for e in envelopes)


def question_rows(
    bench: ModuleType, root: Path, envs: dict[str, dict[str, str]], worst: dict[str, int]
) -> list[str]:
    """The table of questions; `worst` gets each memfuse's worst question at 10×."""
    rng = random.Random(33)
    three = [" ".join(rng.sample(bench.WORDS, 3)) for _ in range(THREE_WORD)]
    vocabulary = [long_question(rng, [*bench.WORDS, *bench.CJK]) for _ in range(LONG)]
    numbers = [long_question(rng, [str(n) for n in range(1, 1000)]) for _ in range(LONG)]
    rows = []
    for label, bullets, seed in (
        ("1×", 365 * bench.PER_JOURNAL, 13),
        ("10×", 3650 * bench.PER_JOURNAL, 17),
    ):
        for who, env in envs.items():
            ws, _last = bench.make_workspace(root / f"q{bullets}-{who}", bullets, seed=seed)
            argv = [bench.MEMFUSE, "recall", "--batch", "-w", str(ws), "--without", "store"]
            build, _done = bench.timed([*argv, "--now", NOW], stdin=b"warm up\n", env=env)
            own = {kind: asked(bench, ws, qs, env)
                   for kind, qs in (("three", three), ("vocabulary", vocabulary), ("numbers", numbers))}  # fmt: skip
            cells = [f"{build:.1f} s"] + [
                f"{statistics.median(v):.0f} / {v[-1]:.0f}" for v in own.values()
            ]
            rows.append(f"| {label}: {bullets:,} bullets | {who} | " + " | ".join(cells) + " |")
            worst[who] = max(v[-1] for v in own.values())
    return [
        "Questions, the journals alone (`--without store`): memfuse's own milliseconds per"
        f" question, median / worst; {THREE_WORD} three-word questions, {LONG} of each long"
        " kind.\n",
        "| index | memfuse | building the index | three words | 1 799 characters of the"
        " vocabulary | 1 799 characters of numbers |",
        "|---|---|---:|---:|---:|---:|",
        *rows,
    ]


def empty_journals(ws: Path, n: int) -> None:
    folder = ws / "memory"
    folder.mkdir(parents=True)
    last = date(2026, 11, 30)
    for d in range(n):
        (folder / f"{last - timedelta(days=d)}.md").touch()


def touch_all(ws: Path) -> None:
    later = time.time() + 3600  # later than any touch before it
    for path in (ws / "memory").iterdir():
        os.utime(path, (later, later))


def own_ms(bench: ModuleType, argv: list[str], env: dict[str, str]) -> tuple[float, Any]:
    seconds, done = bench.timed([*argv, "--json"], env=env)
    envelope = json.loads(done.stdout)
    assert envelope["status"] == "ok", envelope["warnings"][:3]
    return seconds, envelope


def refresh_rows(
    bench: ModuleType, root: Path, envs: dict[str, dict[str, str]], split: list[str]
) -> list[str]:
    """The table of touched empty journals; `split` gets, for each, what of the sync's own
    time is the index's refresh and what is the rest of the sync."""
    rows = []
    for n in EMPTY:
        for who, env in envs.items():
            folder = root / f"empty{n}-{who}"
            server = bench.reference_server(folder, "empty")
            ws = folder / "workspace"
            empty_journals(ws, n)
            common = ["-w", str(ws), "--transport", "session", "--mcporter-config",
                      str(server.config), "--now", NOW]  # fmt: skip
            first, _e = own_ms(bench, [bench.MEMFUSE, "sync", *common], env)
            quiet, _e = own_ms(bench, [bench.MEMFUSE, "sync", *common], env)
            touch_all(ws)
            wall, sync = own_ms(bench, [bench.MEMFUSE, "sync", *common], env)
            # journals from 1900 on: older names are named and skipped (decision 106)
            dated = sum(1 for p in (ws / "memory").iterdir() if p.name >= "1900")
            assert sync["data"]["recall_index_refreshed"] == dated, sync["data"]
            touch_all(ws)
            _s, recall = own_ms(bench, [bench.MEMFUSE, "recall", "staging", "--without", "store",
                                        *common[:2], "--now", NOW], env)  # fmt: skip
            sync_own = (sync["duration_ms"] - sync["store_ms"]) / 1000
            refreshed = recall["duration_ms"] / 1000
            split.append(
                f"{n:,} ({who}): {sync_own:.1f} s, of which the index's refresh at most"
                f" {refreshed:.1f} s and the rest {sync_own - refreshed:.1f} s"
            )
            rows.append(
                f"| {n:,} | {who} | {first:.1f} s | {quiet:.1f} s | {wall:.1f} s, own {sync_own:.1f} s"
                f" | {refreshed:.1f} s |"
            )
    return [
        "\nEmpty journals the agent touches: N journals with nothing in them, each touched (its"
        " mtime moved) before the run.\n",
        "| N | memfuse | first `memfuse sync` | plain sync, nothing touched | plain sync, all"
        " touched: wall, memfuse's own | `memfuse recall --without store`, all touched again"
        " (its refresh and one question) |",
        "|---:|---|---:|---:|---:|---:|",
        *rows,
    ]


def rows(root: Path, bench: ModuleType) -> list[str]:
    """The section's lines (bench.SECTIONS), its heading first."""
    envs: dict[str, dict[str, str]] = {"this": dict(os.environ)}
    before = os.environ.get("MEMFUSE_BENCH_BEFORE")
    if before:
        envs = {"before": {**os.environ, "PYTHONPATH": before}, "after": dict(os.environ)}
    said = (
        [
            f"`before` is the memfuse of `{before}` (MEMFUSE_BENCH_BEFORE), `after` this checkout's.\n"
        ]
        if before
        else []
    )
    worst: dict[str, int] = {}
    split: list[str] = []
    questions = question_rows(bench, root, envs, worst)
    refreshes = refresh_rows(bench, root, envs, split)
    return [
        "\n### What one question and one refresh cost (issue 33), the journals alone\n",
        *said,
        *questions,
        *refreshes,
        "",
        "memfuse's own time is the envelope's duration (the journals alone: no store) or, for"
        " sync, its duration less the store's. A question asks the index for its rarest terms"
        " only, at most 32 holding at most 100 000 rows between them (docs/decisions.md 120):"
        " the worst question over ten years cost "
        + ", ".join(f"{ms} ms ({who})" for who, ms in worst.items())
        + ". The shared machine makes single figures noisy"
        + ("; before and after ran one after the other in the same run" if before else "")
        + ". Touched empty journals, the plain sync's own time: "
        + "; ".join(split)
        + " (the recall row is that refresh and one question). The rest is the sync's own work"
        " a touched journal: it reads each one again through the confined reader and compares"
        " it with its ledger (memfuse.sync).",
    ]
