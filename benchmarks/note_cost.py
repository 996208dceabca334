"""What one note costs the agent's turn, with today's journal at 1, 8 and 16 MiB (issue 46),
and through the door an agent uses (issue 57): the `note` tool call of a real `memfuse serve`
process, driven by the MCP SDK's stdio client, timed in the client (`--serve`).

Each journal is the agent's own shape: `## HH:MM` sections of plain bullets (~90 bytes each),
grown to the size. In one process, as `memfuse serve` runs it, with its marks:

- `first`: the process's first note in that journal, which reads it whole (decision 340);
- `tail`: each later note (the median and the slowest of NOTES), which reads from the last
  note's line on — also after the agent appended lines of its own between notes (`after agent`);
- `bytes read`: what the tail note read, through os.pread;
- `next process's first`: a new process's first note, on the mark the state folder keeps.

Wall time of `memfuse.workspace.note.append_note` (open, read, plan, append, fsync), on the
machine's disk. The read cap is raised to 17 MiB for the 16 MiB row (the default 16 MiB cap
refuses a note that would pass it).

    .venv/bin/python benchmarks/note_cost.py          # 1, 8, 16 MiB
    .venv/bin/python benchmarks/note_cost.py 8        # one size

With `MEMFUSE_BENCH_BEFORE=SRC` (another tree's `src/`, put first on sys.path) the same notes
are written by that tree's `append_note`, which has no marks (every note reads whole), e.g.
main before issue 46:

    MEMFUSE_BENCH_BEFORE=/work/main/src .venv/bin/python benchmarks/note_cost.py

`--serve` (issue 57): per section shape (`hourly`: `## HH:MM` sections of 40 bullets; `one`:
one section of every bullet; `numbered`: one section, every tenth item numbered `1.`; `bare`:
bullets under no heading), an 8 MiB journal and a fresh state folder: a `memfuse serve`
process's notes (its first, then NOTES more, every fifth after two lines the agent appended
itself), then a new process's first note on the mark the state folder keeps. Each figure is
the tool call's wall time in the client (sent → answer read); beside the new process's first
note, the CPU its thread ran (serve makes the writes' thread for its first note) and the whole
serve process's meanwhile (the warm-up's, mostly), from Linux's schedstat. `--busy` runs it
with two busy loops holding both cores (`python -c 'while 1: pass'` ×2, stopped at the end):

    .venv/bin/python benchmarks/note_cost.py --serve 8
    .venv/bin/python benchmarks/note_cost.py --serve --busy 8
    .venv/bin/python benchmarks/note_cost.py --serve 8 hourly one   # some shapes only
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BEFORE = os.environ.get("MEMFUSE_BENCH_BEFORE")
if BEFORE:
    sys.path.insert(0, BEFORE)

from memfuse.workspace.layout import Workspace  # noqa: E402
from memfuse.workspace.note import append_note  # noqa: E402

MIB = 1 << 20
NOTES = 20
AT = datetime(2026, 11, 29, 23, 30, tzinfo=UTC)


def journal(size: int) -> bytes:
    parts, total, n = ["# Journal\n"], 10, 0
    while total < size:
        if n % 40 == 0:
            heading = f"\n## {n // 40 % 23:02d}:{n // 40 % 60:02d}\n"
            parts.append(heading)
            total += len(heading)
        line = f"- Bullet {n}: the billing migration cutover moved, Alice reviews the plan\n"
        parts.append(line)
        total += len(line)
        n += 1
    return "".join(parts).encode()


class Counting:
    def __init__(self) -> None:
        self.bytes = 0

    def __call__(self, fd: int, size: int, offset: int) -> bytes:
        got = os.pread(fd, size, offset)
        self.bytes += len(got)
        return got


def row(mib: int) -> str:
    with tempfile.TemporaryDirectory() as top:
        root = Path(top)
        (root / "ws" / "memory").mkdir(parents=True)
        path = root / "ws" / "memory" / "2026-11-29.md"
        path.write_bytes(journal(mib * MIB))
        workspace = Workspace(root / "ws", root / "state", read_cap=17 * MIB)
        options: dict[str, Any] = {}
        if not BEFORE:
            from memfuse.state.folder import StateFolder
            from memfuse.workspace.note_file import Marks

            options["marks"] = Marks(StateFolder(root / "state"))
        start = time.perf_counter()
        append_note(workspace, "The first note of the process", AT, **options)
        first = time.perf_counter() - start
        tails: list[float] = []
        counted = Counting()
        for n in range(NOTES):
            if n % 5 == 4:  # the agent's own lines between notes
                with path.open("a") as fh:
                    fh.write(f"- the agent's own line {n}\n- and another {n}\n")
            counted = Counting()
            start = time.perf_counter()
            if not BEFORE:
                options["read"] = counted
            append_note(workspace, f"Note {n} of the evening", AT, **options)
            tails.append(time.perf_counter() - start)
        renewed = "whole"
        if not BEFORE:  # a new process: its marks from the state folder
            options["marks"] = Marks(StateFolder(root / "state"))
            start = time.perf_counter()
            append_note(workspace, "The first note of the next process", AT, **options)
            renewed = f"{(time.perf_counter() - start) * 1000:.1f} ms"
        return (
            f"| {mib} MiB | {first * 1000:.0f} ms | {statistics.median(tails) * 1000:.1f} ms |"
            f" {max(tails) * 1000:.1f} ms | {counted.bytes if not BEFORE else 'whole'} |"
            f" {renewed} |"
        )


SHAPES = ["hourly", "one", "numbered", "bare"]


def shaped(shape: str, size: int) -> bytes:
    """A journal of `size` bytes in one of the section shapes (see the module's text)."""
    if shape == "hourly":
        return journal(size)
    parts, total, n = ["# Journal\n" if shape == "bare" else "# Journal\n\n## 09:00\n"], 30, 0
    while total < size:
        marker = "1." if shape == "numbered" and n % 10 == 9 else "-"
        line = f"{marker} Bullet {n}: the billing migration cutover moved, Alice reviews the plan\n"
        parts.append(line)
        total += len(line)
        n += 1
    return "".join(parts).encode()


def cpu_of(pid: int) -> dict[int, float]:
    """The CPU seconds each thread of process `pid` has run (Linux's schedstat, in ns)."""
    cpus: dict[int, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            cpus[int(task.name)] = int((task / "schedstat").read_text().split()[0]) / 1e9
    return cpus


def children() -> set[int]:
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            found.update(map(int, (task / "children").read_text().split()))
    return found


def served(
    workspace: Path, state: Path, path: Path, texts: list[str], cpus: list[float] | None = None
) -> list[float]:
    """Each note through one `memfuse serve` process: the tool call's wall seconds, in the
    client, after the process's first answer (a `status`, timed first: the warm-up); in
    `cpus`, the CPU seconds of each note: the thread the first note started (serve writes
    on a thread made for the first), and the whole serve process's meanwhile."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    memfuse = str(Path(sys.executable).parent / "memfuse")
    argv = ["serve", "-w", str(workspace), "--now", AT.strftime("%Y-%m-%dT%H:%M")]
    env = {**os.environ, "MEMFUSE_STATE_DIR": str(state)}
    params = StdioServerParameters(command=memfuse, args=argv, env=env)
    walls: list[float] = []

    async def main() -> None:
        before = children()
        async with (
            stdio_client(params, errlog=sys.stderr) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            (pid,) = children() - before
            started = time.perf_counter()  # serve's warm-up (the index caught up) is paid
            await session.call_tool("status", {})  # before its first answer: not the note's
            walls.append(time.perf_counter() - started)
            for n, text in enumerate(texts):
                if n % 5 == 4:
                    with path.open("a") as fh:
                        fh.write(f"- the agent's own line {n}\n- and another {n}\n")
                started, cpu = time.perf_counter(), cpu_of(pid)
                result = await session.call_tool("note", {"text": text})
                walls.append(time.perf_counter() - started)
                if cpus is not None:
                    after = cpu_of(pid)
                    cpus.append(after[min(after.keys() - cpu.keys(), default=pid)])
                    cpus.append(sum(after.values()) - sum(cpu.values()))
                assert not result.is_error, result.content

    anyio.run(main)
    return walls


def serve_row(shape: str, mib: int) -> str:
    with tempfile.TemporaryDirectory() as top:
        root = Path(top)
        (root / "ws" / "memory").mkdir(parents=True)
        path = root / "ws" / "memory" / "2026-11-29.md"
        path.write_bytes(shaped(shape, mib * MIB))
        warm, first, *later = served(root / "ws", root / "state", path,
                                     [f"Note {n} of the evening" for n in range(NOTES + 1)])  # fmt: skip
        cpus: list[float] = []
        _, renewed = served(root / "ws", root / "state", path, ["The next process's first"], cpus)
        workspace = Workspace(root / "ws", root / "state2", read_cap=17 * MIB)
        from memfuse.state.folder import StateFolder
        from memfuse.workspace.note_file import Marks

        marks = Marks(StateFolder(root / "state2"))
        append_note(workspace, "The function's first", AT, marks=marks)
        calls: list[float] = []
        for n in range(NOTES):
            start = time.perf_counter()
            append_note(workspace, f"Function note {n}", AT, marks=marks)
            calls.append(time.perf_counter() - start)
        return (
            f"| {shape} | {mib} MiB | {warm:.1f} s | {first * 1000:.0f} ms"
            f" | {statistics.median(later) * 1000:.1f} ms"
            f" | {max(later) * 1000:.1f} ms | {renewed * 1000:.1f} ms ({cpus[0] * 1000:.0f}; {cpus[1] * 1000:.0f})"
            f" | {statistics.median(calls) * 1000:.1f} ms |"
        )


def main(argv: list[str]) -> None:
    if "--serve" in argv:
        busy = [
            subprocess.Popen([sys.executable, "-c", "while 1: pass"])
            for _ in range(2 if "--busy" in argv else 0)
        ]
        try:
            sizes = [int(a) for a in argv if a.isdigit()] or [8]
            print(f"load average: {os.getloadavg()[0]:.2f}; busy loops: {len(busy)}")
            print(
                "| shape | journal | serve's warm-up (its first answer) | first note (no mark yet)"
                " | later note, median | slowest | a new process's first note (CPU ms: its thread's; serve's)"
                " | the function, median |"
            )
            print("|---|---|---:|---:|---:|---:|---:|---:|")
            shapes = [a for a in argv if a in SHAPES] or SHAPES
            for shape in shapes:
                for mib in sizes:
                    print(serve_row(shape, mib), flush=True)
        finally:
            for loop in busy:
                loop.kill()
                loop.wait()
        return
    sizes = [int(a) for a in argv] or [1, 8, 16]
    print(
        f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; {BEFORE or 'this tree'}"
    )
    print(
        "| journal | first note (whole) | later note, median | slowest | bytes read |"
        " next process's first |"
    )
    print("|---|---|---|---|---|---|")
    for mib in sizes:
        print(row(mib), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
