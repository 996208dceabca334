"""Operating memfuse: the smoke scripts fail loudly, the crontab example is valid, and the
docs name everything `--help` shows."""

from __future__ import annotations

import os
import re
import select
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from memfuse.cli import app
from memfuse.errors import ExitCode
from tests.conftest import UNREACHED

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_a_broken_smoke_run_names_the_failing_step() -> None:
    env = {**os.environ, "SMOKE_SERVER": "no-such-server", "MEMFUSE": str(BIN / "memfuse")}
    result = subprocess.run(
        ["bash", str(ROOT / "tests" / "smoke" / "normal_day.sh")],
        capture_output=True, text=True, env=env, timeout=UNREACHED, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert "SMOKE FAIL [normal_day] at step 'doctor'" in result.stderr


CRON_FIELD = re.compile(r"^(\*|\d+(-\d+)?(,\d+(-\d+)?)*)(/\d+)?$")


def crontab_entries() -> list[tuple[list[str], str]]:
    entries = []
    for line in (ROOT / "examples" / "crontab.txt").read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#") or re.match(r"^[A-Z_]+=", line):
            continue
        parts = line.split(None, 5)
        entries.append((parts[:5], parts[5]))
    return entries


def test_every_crontab_line_is_a_cron_entry_whose_command_runs(tmp_path: Path) -> None:
    entries = crontab_entries()
    assert {command.split()[1] for _f, command in entries} == {"sync", "surface", "tidy"}
    for fields, command in entries:
        assert len(fields) == 5
        assert all(CRON_FIELD.match(f) for f in fields), fields
        assert "%" not in command  # cron turns % into newlines
        argv = shlex.split(command.split(">>")[0])
        assert Path(argv[0]).is_absolute() and Path(argv[0]).name == "memfuse"
        result = subprocess.run(
            [str(BIN / "memfuse"), *argv[1:], "--help"],
            capture_output=True, text=True, timeout=UNREACHED, check=False,
        )  # fmt: skip
        assert result.returncode == 0, (command, result.stderr)
        assert "Usage: memfuse" in result.stdout
    schedule = {" ".join(f): c.split()[1] for f, c in entries}
    assert schedule == {"0 14,22 * * *": "sync", "5 14,22 * * *": "surface", "0 3 * * *": "tidy"}


def help_surface() -> tuple[set[str], set[str], set[str]]:
    """Every command, option and environment variable that --help shows."""
    group: Any = typer.main.get_command(app)  # typer vendors its own click: duck-type it
    commands, options, env_vars = set(group.commands), set(), set()
    for command in group.commands.values():
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                options.update(o for o in param.opts if o.startswith("--"))
                env_vars.update(re.findall(r"\b(?:MEMFUSE|AGENT_MEMORY)_[A-Z_]+", param.help or ""))
        env_vars.update(re.findall(r"\b(?:MEMFUSE|AGENT_MEMORY)_[A-Z_]+", command.help or ""))
    return commands, options - {"--help"}, env_vars


@pytest.mark.parametrize("kind", ["commands", "options", "env", "exit codes"])
def test_docs_name_everything_help_shows(kind: str) -> None:
    docs = "\n".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    commands, options, env_vars = help_surface()
    wanted = {
        "commands": {f"memfuse {c}" for c in commands},
        "options": options,
        "env": env_vars | {"AGENT_MEMORY_RERANK_PROVIDER", "AGENT_MEMORY_RERANK_API_KEY",
                           "AGENT_MEMORY_RERANK_MODEL", "AGENT_MEMORY_RERANK_BASE_URL"},
        "exit codes": {f"`{int(code)}`" for code in ExitCode},
    }[kind]  # fmt: skip
    missing = sorted(w for w in wanted if w not in docs)
    assert not missing, f"docs/ do not mention: {missing}"


@pytest.mark.parametrize(
    ("argv", "code"),
    [(["classify", "I prefer tea", "-w", "."], 0), (["classify", "--json", "", "-w", "."], 0)],
)
def test_a_reader_that_closes_the_pipe_ends_nothing_but_the_output(
    tmp_path: Path, argv: list[str], code: int
) -> None:
    """`memfuse doctor | head -3`: memfuse finishes its run and exits with the run's own code,
    without a word on stderr, however early the reader went (here: before the first byte)."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before memfuse writes anything
    try:
        done = subprocess.run(
            [str(BIN / "memfuse"), *argv], stdout=write, stderr=subprocess.PIPE,
            cwd=tmp_path, timeout=UNREACHED, check=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert done.stderr == b""
    assert done.returncode == code


def test_recall_batch_answers_as_asked_and_stops_when_no_one_reads(tmp_path: Path) -> None:
    """An agent can ask, read the answer, and ask again; and `yes … | memfuse recall --batch |
    head -1` ends instead of answering forever into a closed pipe."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-11-20.md").write_text("## 10:00\n- Alice prefers dark mode\n")
    env = {**os.environ, "HOME": str(tmp_path), "MEMFUSE_WORKSPACE": str(ws)}
    argv = [str(BIN / "memfuse"), "recall", "--batch", "--without", "store"]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env, text=True, bufsize=1,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("dark mode\n")
        proc.stdin.flush()
        # However long a loaded machine takes to start it: an answer, stdin still open.
        ready, _w, _x = select.select([proc.stdout], [], [], UNREACHED)
        assert ready, "no answer while the question's stdin is still open"
        first = proc.stdout.readline()
        assert '"Alice prefers dark mode"' in first
        proc.stdout.close()  # the reader goes away; the asker does not
        # 1 MB of questions, far past a pipe's buffer: they reach the end only if memfuse
        # reads and answers every one into the closed pipe (not a clock: that is the proof).
        stopped = False
        try:
            for _ in range(100_000):
                proc.stdin.write("dark mode\n")
        except BrokenPipeError:
            stopped = True
        assert stopped, "memfuse went on reading questions no one reads the answers of"
        proc.wait(timeout=UNREACHED)
    finally:
        proc.kill()
    assert proc.returncode == 0
