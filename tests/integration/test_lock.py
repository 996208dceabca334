"""One memfuse run per workspace: real processes racing for the lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memfuse.run.lock import WorkspaceLock
from memfuse.state.folder import StateFolder
from tests.conftest import UNREACHED, StoreServer
from tests.fakes import state_of

pytestmark = pytest.mark.integration
MEMFUSE = str(Path(sys.executable).parent / "memfuse")


def start(ws: Path, store: StoreServer, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [MEMFUSE, "sync", "-w", str(ws), "--date", "2026-02-21", "--now", "2026-02-21T22:00",
         "--jobs", "1", "--json", *store.cli_args(), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def wait_for_lock(ws: Path, first: subprocess.Popen[str]) -> None:
    """Until the first run holds the lock (it cannot finish before: the gate holds its calls)."""
    lock = state_of(ws) / "lock"
    while first.poll() is None:
        if lock.exists() and lock.read_text().startswith("pid"):
            return
        time.sleep(0.05)
    raise AssertionError("the first run ended without taking the lock")


@pytest.fixture
def slow_sync(store: StoreServer, workspace: Path) -> Iterator[StoreServer]:
    """A store whose answers wait for the test to open its gate: the first run holds the lock
    for as long as the test needs, on any machine (not for a second the machine may outrun)."""
    (workspace / "memory" / "2026-02-21.md").write_text(
        "## 22:00\n- Reviewed the roadmap with Alice\n- Fixed the importer bug from Tuesday\n"
        "- Planned the Lisbon offsite with Carol\n"
    )
    store.set_mode("gated", FAULT_GATE=str(store.root / "gate"))
    yield store
    open_gate(store)  # an orphaned server of a killed run finishes and leaves


def open_gate(store: StoreServer) -> None:
    (store.root / "gate").touch()


def test_a_second_run_exits_75_at_once_while_the_first_works(
    slow_sync: StoreServer, workspace: Path
) -> None:
    first = start(workspace, slow_sync)
    wait_for_lock(workspace, first)
    second = subprocess.run(
        [MEMFUSE, "sync", "-w", str(workspace), "--json", *slow_sync.cli_args()],
        capture_output=True, text=True, timeout=UNREACHED, check=False,
    )  # fmt: skip
    # The second run must not queue behind the first: it finished while the first is still
    # held at the gate (speed itself is measured in benchmarks/, not asserted here).
    assert first.poll() is None, "the first run ended before the second was refused"
    open_gate(slow_sync)
    out, _err = first.communicate(timeout=UNREACHED)
    assert second.returncode == 75
    assert "another memfuse run holds" in second.stderr
    assert json.loads(second.stdout)["exit_code"] == 75
    assert first.returncode == 0
    assert json.loads(out)["data"]["counts"]["added"] == 3


def test_wait_queues_the_second_run_behind_the_first(
    slow_sync: StoreServer, workspace: Path
) -> None:
    first = start(workspace, slow_sync)
    wait_for_lock(workspace, first)
    second = start(workspace, slow_sync, "--wait", str(UNREACHED))  # the lock, not a clock
    open_gate(slow_sync)
    first_out, _ = first.communicate(timeout=UNREACHED)
    second_out, second_err = second.communicate(timeout=UNREACHED)
    assert first.returncode == 0
    assert second.returncode == 0, second_err
    assert json.loads(first_out)["data"]["counts"]["added"] == 3
    assert json.loads(second_out)["data"]["counts"]["unchanged"] == 3


def test_sigkill_leaves_no_lock_behind(slow_sync: StoreServer, workspace: Path) -> None:
    first = start(workspace, slow_sync)
    wait_for_lock(workspace, first)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=UNREACHED)
    with WorkspaceLock(StateFolder(state_of(workspace)), "test", wait=0):
        pass  # acquired at once: the kernel released the dead run's lock
    slow_sync.set_mode("ok-counted")
    rerun = subprocess.run(
        [MEMFUSE, "sync", "-w", str(workspace), "--date", "2026-02-21", "--json", *slow_sync.cli_args()],
        capture_output=True, text=True, timeout=UNREACHED, check=False,
    )  # fmt: skip
    assert rerun.returncode == 0
    counts = json.loads(rerun.stdout)["data"]["counts"]
    assert counts["added"] + counts["skipped"] + counts["unchanged"] == 3
