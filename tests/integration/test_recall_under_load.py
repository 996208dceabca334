"""The same workspace and questions give the same ranked lists on a quiet machine and on one
whose cores are all held by busy loops (issue 56): what a question embeds is bounded by a
count, never by how fast the model ran. The questions come right after the journals were
written (nothing embedded yet: each question embeds its share of the pending bullets), through
`memfuse recall --batch` with the real model, the store left out (its own feedback moves its
order between two asks)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memfuse.recall import semantic

pytestmark = pytest.mark.integration

MEMFUSE = str(Path(sys.executable).parent / "memfuse")
QUESTIONS = [
    "what did I decide about project3",
    "who did I meet in city2",
    "the meeting where option4 was chosen",
    "person5 and the budget",
    "which city was project7 discussed in",
    "a plan with person11",
    "travel to city6",
    "option1 for project0",
]
BUSY = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end: pass\n"


def journals(ws: Path) -> None:
    (ws / "memory").mkdir(parents=True)
    for day in range(3):
        lines = ["## 09:00"]
        for n in range(70):
            lines.append(
                f"- Note {day}-{n}: met person{n % 17} about project{n % 11} in city{n % 7},"
                f" decided option{n % 5}, budget {n * 37 % 900} euros"
            )
        (ws / "memory" / f"2026-11-2{day}.md").write_text("\n".join(lines) + "\n")


def ask(ws: Path, state: Path) -> list[list[tuple[str, str]]]:
    done = subprocess.run(
        [MEMFUSE, "recall", "--batch", "-w", str(ws), "--state-dir", str(state), "--without",
         "store", "--now", "2026-11-22T23:00", "--limit", "10"],
        input="\n".join(QUESTIONS) + "\n", capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(a["warnings"] == [] for a in answers), [a["warnings"] for a in answers]
    return [[(r["location"], r["reason"]) for r in a["data"]["results"]] for a in answers]


def test_the_same_questions_rank_the_same_on_a_quiet_and_a_saturated_machine(
    tmp_path: Path,
) -> None:
    if semantic.installed() is None:
        pytest.skip("the semantic extra is not installed")
    journals(tmp_path / "quiet")
    shutil.copytree(tmp_path / "quiet", tmp_path / "busy")
    quiet = ask(tmp_path / "quiet", tmp_path / "quiet-state")
    loops = [
        subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2 * (os.cpu_count() or 1))
    ]
    try:
        busy = ask(tmp_path / "busy", tmp_path / "busy-state")
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    assert any("meaning" in reason for answer in quiet for _at, reason in answer)
    assert busy == quiet
