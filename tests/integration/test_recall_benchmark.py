"""benchmarks/recall_locomo.py runs at HEAD (issue 56): a smoke of 5 questions on a small
conversation in LoCoMo's shape (the data itself is not ours to ship), through the CLI a user
has, the index as the sync leaves it and after tidy; MEMFUSE_SEMANTIC=off is honoured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TURNS = [
    ("Caroline", "I went to the LGBTQ support group yesterday and it was powerful."),
    ("Melanie", "That sounds wonderful. I painted a sunrise over the lake last week."),
    ("Caroline", "I am researching adoption agencies because I want to be a mother."),
    ("Melanie", "My kids love camping; we went to the mountains in June."),
    ("Caroline", "My grandmother gave me a necklace from Sweden when I was young."),
    ("Melanie", "I signed up for a pottery class and made a black and white bowl."),
]
QUESTIONS = [
    ("When did Caroline go to the support group?", 2, "D1:1"),
    ("What did Melanie paint?", 4, "D1:2"),
    ("What is Caroline researching?", 4, "D1:3"),
    ("Where did Melanie's family go camping?", 4, "D2:1"),
    ("Where is Caroline's necklace from?", 4, "D2:2"),
]


def conversation(folder: Path) -> Path:
    folder.mkdir()
    sessions = {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": s, "dia_id": f"D1:{n}", "text": t}
            for n, (s, t) in enumerate(TURNS[:3], start=1)
        ],
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [
            {"speaker": s, "dia_id": f"D2:{n}", "text": t}
            for n, (s, t) in enumerate(TURNS[3:], start=1)
        ],
    }
    qa = [{"question": q, "answer": "-", "category": c, "evidence": [e]} for q, c, e in QUESTIONS]
    data = {"speaker_a": "Caroline", "speaker_b": "Melanie", **sessions, "qa": qa}
    (folder / "conv-1.json").write_text(json.dumps(data))
    return folder


def bench(data: Path, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "recall_locomo.py", str(data), "--first", "5", "--quick",
         "--no-write"],
        cwd=ROOT / "benchmarks", capture_output=True, text=True, check=False,
        env={**os.environ, **env}, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_locomo_benchmark_scores_what_ships_after_sync_and_after_tidy(tmp_path: Path) -> None:
    out = bench(conversation(tmp_path / "data"))
    assert "5 questions of 1 conversations" in out
    assert "6 embedded by the sync" in out  # the index is whole before the first question
    for row in ("memfuse recall, after sync (as shipped)", "memfuse recall, after tidy",
                "by words alone (without meaning)"):  # fmt: skip
        assert f"| {row} |" in out
    assert "after sync (as shipped), with meaning less without: R@10" in out


def test_the_benchmark_honours_memfuse_semantic_off(tmp_path: Path) -> None:
    out = bench(conversation(tmp_path / "data"), MEMFUSE_SEMANTIC="off")
    assert "recall's model of meaning: off (MEMFUSE_SEMANTIC=off)" in out
    assert "0 embedded by the sync" in out
    shipped = next(line for line in out.splitlines() if "| memfuse recall, after sync" in line)
    words = next(line for line in out.splitlines() if "| by words alone" in line)
    assert shipped.split("|")[2:] == words.split("|")[2:]
