"""`memfuse serve` with a comment flood in the workspace (issue 39, family 8): one journal whose
one bullet holds `<!---->` repeated to 3 MiB, beside a bullet to find. Through one serve session
(the store gone, so the journals answer): `status`, then `where` and `recall` of the other
bullet, each call's wall time taken in the client; a call still unanswered after 300 s counts
as held.

    .venv/bin/python benchmarks/serve_flood.py
    PYTHONPATH=/tmp/memfuse-af1b477/src .venv/bin/python benchmarks/serve_flood.py   # before
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import anyio
from bench import MEMFUSE

HELD = 300.0


def main() -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root = Path(tempfile.mkdtemp(prefix="memfuse-flood-"))
    memory = root / "ws" / "memory"
    memory.mkdir(parents=True)
    flood = "<!---->" * (3 * 1024 * 1024 // 7)
    (memory / "2026-11-16.md").write_text(
        f"## 09:00\n- The deploy key {flood} rotates on Monday\n- Maria owns billing\n"
    )
    gone = root / "gone-mcporter.json"
    entry = {"command": str(root / "no-such-server"), "args": []}
    gone.write_text(json.dumps({"mcpServers": {"agent-memory": entry}, "imports": []}))
    argv = ["serve", "-w", str(root / "ws"), "--mcporter-config", str(gone),
            "--now", "2026-11-16T23:00", "--transport", "session"]  # fmt: skip
    env = {**os.environ, "HOME": str(root)}
    params = StdioServerParameters(command=MEMFUSE, args=argv, env=env)
    calls = [("status", {}), ("where", {"what": "Maria owns billing"}),
             ("recall", {"query": "Maria billing", "limit": 5})]  # fmt: skip

    async def run() -> None:
        with tempfile.TemporaryFile("w+") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for name, arguments in calls:
                    started = time.perf_counter()
                    with anyio.move_on_after(HELD) as scope:
                        result = await session.call_tool(name, arguments)
                    wall = time.perf_counter() - started
                    if scope.cancelled_caught:
                        print(f"| `{name}` | held past {HELD:.0f} s |", flush=True)
                        return
                    shown = result.content[0].text if result.content else ""
                    found = "Maria owns billing" in shown
                    print(f"| `{name}` | {wall:.2f} s | {'finds' if found else 'no'} bullet |",
                          flush=True)  # fmt: skip

    anyio.run(run)


if __name__ == "__main__":
    sys.exit(main())
