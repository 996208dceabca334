"""SIGKILL memfuse at random points of a sync; a clean re-run must leave every bullet in the
store exactly once, and the ledger must agree with the store."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import UNREACHED, StoreServer, mcporter_command
from tests.fakes import state_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]
MEMFUSE = str(Path(sys.executable).parent / "memfuse")
DAY = "2026-11-29"
SEED = 20261202


WORDS = (
    "billing invoice replication cutover runbook postmortem standup roadmap staging deploy "
    "rollback migration dashboard latency webhook queue alert review pairing incident cache "
    "schema index offsite finance Alice Bob Carol Dana Jonas Priya Mia Berlin Lisbon Hamburg"
).split()
CJK = "今天 开会 讨论 迁移 发布 回滚 监控 告警 复盘 文档 测试 数据库 队列 缓存 延迟".split()


def journal(n: int, rng: random.Random) -> list[str]:
    """n distinct bullets, each with its own ticket number: the store never merges two of them.
    (Tests do not import benchmarks/: those are scripts, run from their own folder.)"""
    bullets = []
    for i in range(n):
        words = rng.sample(WORDS, 6) + rng.sample(CJK, 2)
        rng.shuffle(words)
        bullets.append(f"{' '.join(words)} — ticket OPS-{i:05d} step {rng.randint(1, 999)}")
    return bullets


def sync_argv(ws: Path, store: StoreServer, transport: str) -> list[str]:
    return [MEMFUSE, "sync", "-w", str(ws), "--date", DAY, "--json",
            "--timeout", str(UNREACHED), *store.cli_args(transport)]  # fmt: skip


def store_state(store: StoreServer) -> tuple[list[str], dict[str, str]]:
    db = sqlite3.connect(store.db)
    contents = sorted(row[0] for row in db.execute("SELECT content FROM memories"))
    by_uri = dict(
        db.execute("SELECT p.uri, p.memory_id FROM paths p JOIN memories m ON m.id = p.memory_id")
    )
    db.close()
    return contents, by_uri


def stored_count(store: StoreServer) -> int:
    """Memories in the store, 0 when the kill came before the server created its database."""
    try:
        db = sqlite3.connect(store.db)
        try:
            return int(db.execute("SELECT count(*) FROM memories").fetchone()[0])
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0


def ledger_state(ws: Path) -> dict[str, str]:
    db = sqlite3.connect(state_of(ws) / "ledger.sqlite3")
    rows = dict(db.execute("SELECT uri, memory_id FROM entries"))
    db.close()
    return rows


TRIALS = [("session", 500)] * 20 + [("mcporter", 40)] * 3


@pytest.mark.parametrize(
    ("trial", "transport", "bullets"), [(i, t, n) for i, (t, n) in enumerate(TRIALS)]
)
def test_sigkill_at_a_random_point_loses_nothing(
    tmp_path: Path, trial: int, transport: str, bullets: int
) -> None:
    rng = random.Random(SEED + trial)
    root = tmp_path / "store"
    root.mkdir()
    store = StoreServer(root=root, mcporter=mcporter_command())
    store.write_config()
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    texts = journal(bullets, rng)
    (ws / "memory" / f"{DAY}.md").write_text("## 09:00\n" + "".join(f"- {t}\n" for t in texts))

    proc = subprocess.Popen(
        sync_argv(ws, store, transport), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    during_startup = trial % 4 == 0
    if during_startup:
        time.sleep(rng.uniform(0.05, 1.0))  # some kills during start-up, before any call
    else:
        # The rest once a random number of memories is written, at most half of them: a point
        # in the sync's progress, not in wall-clock time (start-up time varies a lot).
        # The count is read with the sync stopped (SIGSTOP), so it cannot run on to the end
        # between the read and the kill however the machine schedules them: past the point,
        # at most its --jobs calls in flight still land. No deadline: a slow machine only waits.
        target = rng.randint(1, bullets // 2)
        while proc.poll() is None:
            os.kill(proc.pid, signal.SIGSTOP)
            if stored_count(store) >= target:
                break
            os.kill(proc.pid, signal.SIGCONT)
            time.sleep(0.02)
    proc.kill()
    proc.wait(timeout=10)
    time.sleep(0.3)  # let an orphaned session server finish the write it was in
    if not during_startup:
        # The trial proves something only if the kill landed part-way through the sync.
        assert 0 < stored_count(store) < bullets

    # The kill is where the process and the transport matter; the repair run is the same code
    # in-process (a second memfuse process would only pay its start-up again), over one session.
    rerun = CliRunner().invoke(app, sync_argv(ws, store, "session")[1:])
    envelope = json.loads(rerun.stdout)
    assert rerun.exit_code == 0, rerun.stderr
    assert envelope["status"] == "ok", envelope["warnings"]

    contents, by_uri = store_state(store)
    assert contents == sorted(texts), "every bullet exactly once"
    ledger = ledger_state(ws)
    assert len(ledger) == bullets
    assert ledger == by_uri, "the ledger names the memory the store holds at each URI"
