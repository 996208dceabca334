"""`memfuse serve` warm, measured: a question asked through a raw MCP client over stdio, at a
year of journals, against one `memfuse recall` process per question.

Run from a checkout after `scripts/setup.sh`:

    .venv/bin/python benchmarks/serve_bench.py               # writes its section of docs/performance.md
    .venv/bin/python benchmarks/serve_bench.py --questions 50 --no-write

The year is bench.py's (365 journals × 40 bullets, synced into the reference server), the
questions too (three words of its 36-word vocabulary: FTS5's worst case, decisions 103).
Each question's wall time is taken in the client, from the call sent to its answer read; the
envelope's `store_ms` is the time the store's recall was in flight. Every figure is measured
in the run; nothing is extrapolated.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
from bench import (
    MEMFUSE,
    PER_JOURNAL,
    ROOT,
    WORDS,
    machine,
    make_workspace,
    reference_server,
    run_sync,
    timed,
)
from sections import replace_section

TITLE = "## memfuse serve, warm"
FIRSTS = 5  # sessions whose first question is timed


def asked(
    argv: list[str], questions: list[str], errlog: Any, started_up: list[float] | None = None
) -> list[tuple[float, dict[str, Any]]]:
    """Each question through one `memfuse serve` session, the first one as soon as the
    handshake is done: (wall seconds, envelope). `started_up` gets the seconds from the
    process's start to the handshake's answer (the warm-up is done before it)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=MEMFUSE, args=argv, env=dict(os.environ))
    answers: list[tuple[float, dict[str, Any]]] = []

    async def main() -> None:
        began = time.perf_counter()
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            if started_up is not None:
                started_up.append(time.perf_counter() - began)
            for question in questions:
                started = time.perf_counter()
                result = await session.call_tool("recall", {"query": question, "limit": 10})
                wall = time.perf_counter() - started
                envelope = (result.meta or {})["memfuse/envelope"]  # decision 393
                answers.append((wall, envelope))

    anyio.run(main)
    return answers


def summary(answers: list[tuple[float, dict[str, Any]]]) -> tuple[float, float, float]:
    """Median and 95th percentile of the wall ms, and the median of the store's ms."""
    walls = sorted(w * 1000 for w, _ in answers)
    store = statistics.median(e["store_ms"] for _, e in answers)
    return statistics.median(walls), walls[int(len(walls) * 0.95)], store


def embed_all(ws: Path) -> str:
    """With the `semantic` extra, every bullet's vector made before serving, as the nights'
    syncs leave a year's index (one sync embeds 5 000: decisions 223); what the model is."""
    sys.path.insert(0, str(ROOT / "src"))
    from memfuse.recall import vectors
    from memfuse.recall.index import RecallIndex
    from memfuse.recall.semantic import describe, installed
    from memfuse.state.folder import StateFolder, default_state_dir
    from memfuse.text.classify import Classifier
    from memfuse.workspace.layout import Workspace

    model = installed()
    if model is not None:
        state = StateFolder(default_state_dir(ws, os.environ))
        index = RecallIndex(state)
        index.refresh(
            Workspace(ws, state.path),
            Classifier((), ()),
            print,
            model,
            vectors.EmbedBudget(10**7, 1e9),
        )
        index.close()
    return describe(model)


def measure(root: Path, count: int) -> list[str]:
    server = reference_server(root / "year-store", "year")
    ws, last = make_workspace(root / "year-store", 365 * PER_JOURNAL, seed=13)
    run_sync(server, ws, "--all")
    embedded = embed_all(ws)
    rng = random.Random(5)
    questions = [" ".join(rng.sample(WORDS, 3)) for _ in range(count)]
    now = ["--now", f"{last}T23:00"]
    common = ["-w", str(ws), "--mcporter-config", str(server.config), *now]
    cli = [MEMFUSE, "recall", questions[0], *common, "-q"]
    single = statistics.median(timed(cli)[0] for _ in range(5))

    gone = root / "gone-mcporter.json"  # a store whose server cannot start: the journals alone
    entry = {"command": str(root / "no-such-server"), "args": []}
    gone.write_text(json.dumps({"mcpServers": {"agent-memory": entry}, "imports": []}))
    served = ["serve", *common, "--transport", "session"]
    started_up: list[float] = []
    with tempfile.TemporaryFile("w+") as errlog:
        warm = asked(served, questions, errlog, started_up)
        alone = asked(["serve", "-w", str(ws), "--mcporter-config", str(gone), *now,
                       "--transport", "session"], questions, errlog)  # fmt: skip
        # The first question of a session is one sample a session: FIRSTS more sessions.
        firsts = [warm[0]] + [
            asked(served, [q], errlog, started_up)[0] for q in questions[1:FIRSTS]
        ]
    assert all(e["status"] == "ok" for _, e in warm), [e["warnings"] for _, e in warm][:3]
    assert all(e["data"]["sources"] == ["journals"] for _, e in alone)
    first = statistics.median(w * 1000 for w, _ in firsts)
    first_own = statistics.median(w * 1000 - e["store_ms"] for w, e in firsts)
    first_store = statistics.median(e["store_ms"] for _, e in firsts)
    w_median, w_p95, w_store = summary(warm[1:])
    a_median, a_p95, _ = summary(alone[1:])
    own = sorted(w * 1000 - e["store_ms"] for w, e in warm[1:])
    return [
        f"| recall's model of meaning | {embedded} |",
        f"| one `memfuse recall` process per question, median of 5 | {single * 1000:.0f} ms |",
        f"| `memfuse serve`'s start-up: the process started, the index opened and caught up, the store's server started, one question walked through the local path, the handshake answered, median of the sessions | {statistics.median(started_up) * 1000:.0f} ms |",
        f"| a session's first question, asked as soon as the handshake is answered, median of {len(firsts)} sessions (of which `store_ms`) | {first:.1f} ms ({first_store:.0f} ms) |",
        f"| of which memfuse's own work and the MCP round trip (wall − `store_ms`), median | {first_own:.1f} ms |",
        f"| the store gone: the session's first question | {alone[0][0] * 1000:.1f} ms |",
        f"| `memfuse serve`, warm, with the reference store: a later question's wall time, median / 95th percentile | {w_median:.1f} ms / {w_p95:.1f} ms |",
        f"| of which the store's recall (the envelope's `store_ms`), median | {w_store:.0f} ms |",
        f"| the rest — memfuse's own work and the MCP round trip — median / 95th percentile | {statistics.median(own):.1f} ms / {own[int(len(own) * 0.95)]:.1f} ms |",
        f"| `memfuse serve`, warm, the store gone (the journals answer, one warning): median / 95th percentile | {a_median:.1f} ms / {a_p95:.1f} ms |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/ alone")
    options = parser.parse_args()
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="memfuse-bench-state-")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memfuse-serve-bench-") as tmp:
        rows = measure(Path(tmp), options.questions)
    took = time.monotonic() - started
    block = [
        f"{TITLE} (issue 34): a year of journals, {options.questions} questions\n",
        f"Measured on {datetime.now():%Y-%m-%d %H:%M} in {took:.0f} s — {machine()} — by"
        f" `.venv/bin/python benchmarks/serve_bench.py --questions {options.questions}`."
        " The machine's 2 cores were shared with other work while it ran: the figures are"
        " noisier than on an idle machine.\n",
        "| measure | wall |",
        "|---|---:|",
        *rows,
        "",
        "A question is timed in the client from the `tools/call` sent to its answer read; a"
        " session's first is sent the moment the handshake is answered, as a client that"
        " asks at once would (issue 40: it cost 0.3–0.7 s more than a later one, waiting for"
        " a warm-up that ran beside the handshake; the warm-up is now done before the handshake"
        " is answered, decisions 248). A warm question pays no process start, no settings, no index opening and no server"
        " start; before it, a stamp of the Markdown (one directory scan per journal folder)"
        " decides whether the index needs a refresh at all. The reference"
        " server's recall is a stand-in's: a BM25 in Python over every memory it holds, so"
        " at a year most of a warm answer is its time, not memfuse's (agent-memory's own"
        " recall is a different program; its time is not measured here). The questions are"
        " the worst case for the local index (decisions 103).",
    ]
    print("\n".join(block))
    if not options.no_write:
        replace_section(ROOT / "docs" / "performance.md", TITLE, "\n".join(block))


if __name__ == "__main__":
    sys.exit(main())
