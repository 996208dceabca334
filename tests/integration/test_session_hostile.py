"""A hostile stdio server cannot hang a run (the hostile review of the SDK-free session,
decision 184): one that floods requests and never reads, one that stops reading mid-run, one
whose child keeps the pipe open. Each call is bounded by the timeout, and closing the session
ends the server's whole process group."""

from __future__ import annotations

import contextlib
import os
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memfuse.store.gateway import CallFailed, CallTimeout, ServerSpec
from memfuse.store.gateway.session import SessionGateway
from tests.conftest import UNREACHED

pytestmark = pytest.mark.integration

SERVER = textwrap.dedent(
    """
    import json, os, subprocess, sys, time
    mode, out = sys.argv[1], sys.stdout.buffer
    def send(m):
        out.write(json.dumps(m).encode() + b"\\n"); out.flush()
    def read():
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        return json.loads(line)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    if mode == "flood":  # requests of its own, and it never reads
        for i in range(10**9):
            send({"jsonrpc": "2.0", "id": i, "method": "ping"})
    m = read()
    send({"jsonrpc": "2.0", "id": m["id"], "result": hello})
    if mode == "stall":  # answers the handshake, then stops reading
        time.sleep(300)
    if mode == "child":  # its child keeps stdout open after it leaves; it writes its pid
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                 stdout=sys.stdout, stdin=subprocess.DEVNULL)
        open(sys.argv[2], "w").write(str(child.pid))
    while True:
        m = read()
        if "id" in m:
            send({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": []}})
    """
)


def gateway(tmp_path: Path, mode: str, *extra: str) -> SessionGateway:
    """The timeout is the point against a server that never answers (flood, stall), and out
    of play against one that answers (child): a slow start cannot race it."""
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    spec = ServerSpec(sys.executable, (str(script), mode, *extra), {}, None)
    return SessionGateway(spec, timeout=UNREACHED if mode == "child" else 2, name="hostile")


def finishes(work: Callable[[], object], within: float = 30.0) -> bool:
    """Whether `work` returns (or raises) within `within` seconds (a hang is the failure)."""
    thread = threading.Thread(target=lambda: _quietly(work), daemon=True)
    thread.start()
    thread.join(within)
    return not thread.is_alive()


def _quietly(work: Callable[[], object]) -> None:
    with contextlib.suppress(CallFailed, CallTimeout):
        work()


def test_a_server_flooding_requests_that_never_reads_times_out_and_closes(tmp_path: Path) -> None:
    flood = gateway(tmp_path, "flood")
    with pytest.raises(CallTimeout):
        flood.call("status", {})
    assert finishes(flood.close)


def test_a_server_that_stops_reading_cannot_hold_a_large_write(tmp_path: Path) -> None:
    stalled = gateway(tmp_path, "stall")
    bullet = "a journal bullet the agent made large " * 20_000  # ~800 KB, past any pipe buffer
    with pytest.raises((CallTimeout, CallFailed)):
        stalled.call("remember", {"content": bullet})
    assert finishes(stalled.close)


def test_closing_ends_a_child_that_keeps_the_servers_output_open(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    server = gateway(tmp_path, "child", str(pid_file))
    assert server.list_tools() == []
    assert finishes(server.close)
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.1)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())
