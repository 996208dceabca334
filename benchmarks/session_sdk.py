"""The session transport as written (store/gateway/session.py) against the same transport on
the MCP SDK's client (`mcp.client.stdio` and `ClientSession`), both through `memfuse sync`
into the reference server (issue 48: use a maintained library where it does the job at the
same measured speed).

Run from a set-up checkout (`scripts/setup.sh`):

    .venv/bin/python benchmarks/session_sdk.py              # 5 rounds, the example workspace and 1 000 bullets
    .venv/bin/python benchmarks/session_sdk.py --rounds 3

Each round syncs, in turn, with the hand-written session and with the SDK's (then the other way
round), each into a fresh database and a fresh state folder, so that the load of a shared
machine falls on both sides; each figure is the median of the rounds. The SDK side is this
file run as `memfuse` with `SdkGateway` put in the place of `SessionGateway`: the same calls,
the same answers parsed by the same `parse_answer`, only the MCP client differs. It is a timing
variant, not a replacement: it has none of the session's bounds (its reader gathers a line of
any length, decision 184).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
MEMFUSE = str(Path(PY).parent / "memfuse")
EXAMPLE = ROOT / "examples" / "workspace"


class SdkGateway:
    """The session gateway's calls made through the SDK's client on an event loop thread."""

    name = "session"

    def __init__(self, spec: Any, timeout: float = 30.0, errlog: Any = None, name: Any = None):
        import anyio.from_thread
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=spec.command, args=list(spec.args), env=dict(spec.env), cwd=spec.cwd
        )
        self._errlog = open(os.devnull, "w")  # noqa: SIM115 (closed in close())
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._client = self._portal.wrap_async_context_manager(
            stdio_client(params, errlog=self._errlog)
        )
        read, write = self._client.__enter__()
        self._session_cm = self._portal.wrap_async_context_manager(ClientSession(read, write))
        self._session = self._session_cm.__enter__()
        self._portal.call(self._session.initialize)

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        from memfuse.store.gateway.base import CallFailed, parse_answer

        result = self._portal.call(self._session.call_tool, tool, dict(arguments))
        text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
        if result.is_error:
            raise CallFailed(f"{tool} failed: {text.strip()[:300]}")
        return parse_answer(tool, text)

    def list_tools(self) -> list[str]:
        return [t.name for t in self._portal.call(self._session.list_tools).tools]

    def close(self) -> None:
        self._session_cm.__exit__(None, None, None)
        self._client.__exit__(None, None, None)
        self._portal_cm.__exit__(None, None, None)
        self._errlog.close()


def as_sdk_memfuse() -> None:
    """`memfuse` with the SDK's client in the session transport's place."""
    import memfuse.store.gateway.session as session
    from memfuse.cli import main

    session.SessionGateway = SdkGateway  # type: ignore[assignment,misc]
    sys.argv = ["memfuse", *sys.argv[2:]]
    main()


def workspace(root: Path, bullets: int) -> Path:
    if bullets == 0:
        ws = root / "workspace"
        shutil.copytree(EXAMPLE, ws)
        return ws
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench

    ws, _ = bench.make_workspace(root, bullets)
    return ws


def sync(root: Path, side: str, bullets: int, n: int) -> tuple[float, int]:
    """One `memfuse sync --all --transport session` into a fresh store: wall seconds, calls."""
    folder = root / f"{side}-{bullets}-{n}"
    folder.mkdir()
    ws = workspace(folder, bullets)
    entry = {"command": PY, "args": ["-m", "memfuse.refserver"],
             "env": {"AGENT_MEMORY_DB": str(folder / "store.db")}}  # fmt: skip
    config = folder / "mcporter.json"
    config.write_text(json.dumps({"mcpServers": {"agent-memory": entry}, "imports": []}))
    program = [MEMFUSE] if side == "own" else [PY, __file__, "--as-memfuse"]
    argv = [*program, "sync", "--all", "-w", str(ws), "--transport", "session",
            "--mcporter-config", str(config), "--state-dir", str(folder / "state"),
            "--now", "2026-11-30T23:00", "--json"]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False, cwd=folder)
    seconds = time.perf_counter() - started
    envelope = json.loads(done.stdout)
    if envelope["status"] != "ok":
        raise SystemExit(f"{side}: {envelope['status']} {envelope['warnings'][:3]}")
    return seconds, int(envelope["data"]["calls"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memfuse-sdk-") as tmp:
        for bullets in (0, 1000):
            times: dict[str, list[float]] = {"own": [], "sdk": []}
            calls = {}
            for n in range(options.rounds):
                for side in ("own", "sdk") if n % 2 == 0 else ("sdk", "own"):
                    seconds, calls[side] = sync(Path(tmp), side, bullets, n)
                    times[side].append(seconds)
            what = "the example workspace" if bullets == 0 else f"{bullets} bullets"
            own, sdk = statistics.median(times["own"]), statistics.median(times["sdk"])
            print(f"{what}: own session {own:.2f} s, SDK session {sdk:.2f} s "
                  f"(+{sdk - own:.2f} s, {sdk / own:.2f}×), {calls['own']}/{calls['sdk']} calls, "
                  f"load {os.getloadavg()[0]:.2f}")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["--as-memfuse"]:
        as_sdk_memfuse()
    else:
        main()
