"""memfuse's speed, measured: sync approaches side by side, start-up, parsing, memory.

Run from a checkout after `scripts/setup.sh`:

    .venv/bin/python benchmarks/bench.py                    # 1 000 bullets, writes docs/performance.md
    .venv/bin/python benchmarks/bench.py --bullets 200 --no-write
    .venv/bin/python benchmarks/bench.py --real-config ~/.mcporter/mcporter.json   # also a real server

Every figure it prints is measured in this run; nothing is extrapolated. (a) is the design
documents' approach: one `mcporter call agent-memory.remember` per bullet, one after another.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
MEMFUSE = str(Path(PY).parent / "memfuse")
MCPORTER = f"{shutil.which('node')} {ROOT / 'tools/node_modules/mcporter/dist/cli.js'}"
PER_JOURNAL = 40

WORDS = (
    "billing invoice replication cutover runbook postmortem standup roadmap staging deploy "
    "rollback migration dashboard latency webhook queue alert review pairing incident cache "
    "schema index offsite finance Alice Bob Carol Dana Jonas Priya Mia Berlin Lisbon Hamburg"
).split()
CJK = "今天 开会 讨论 迁移 发布 回滚 监控 告警 复盘 文档 测试 数据库 队列 缓存 延迟".split()


def bullet(rng: random.Random, n: int) -> str:
    words = rng.sample(WORDS, 6) + rng.sample(CJK, 2)
    rng.shuffle(words)
    return f"{' '.join(words)} — ticket OPS-{n:05d} step {rng.randint(1, 999)}"


def make_workspace(root: Path, bullets: int, seed: int = 7) -> tuple[Path, date]:
    """`bullets` bullets over journals of 40, ending on the returned day."""
    rng = random.Random(seed)
    ws = root / "workspace"
    (ws / "memory").mkdir(parents=True)
    days = -(-bullets // PER_JOURNAL)
    last = date(2026, 11, 30)
    n = 0
    for d in range(days):
        day = last - timedelta(days=days - 1 - d)
        lines = []
        for section in ("09:30", "14:00", "22:00"):
            lines.append(f"## {section}")
            for _ in range(PER_JOURNAL // 3 + 1):
                if n < bullets and len([x for x in lines if x.startswith("-")]) < PER_JOURNAL:
                    lines.append(f"- {bullet(rng, n)}")
                    n += 1
        (ws / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n")
    return ws, last


@dataclass
class Server:
    """An MCP server for one scenario: the reference server on a fresh DB, or a real one."""

    config: Path
    name: str
    command: list[str]
    env: dict[str, str]


def reference_server(root: Path, label: str) -> Server:
    root.mkdir(parents=True, exist_ok=True)
    db = root / f"{label}.db"
    env = {"AGENT_MEMORY_DB": str(db)}
    config = root / f"{label}-mcporter.json"
    command = [PY, "-m", "memfuse.refserver"]
    entry = {"command": command[0], "args": command[1:], "env": env}
    config.write_text(json.dumps({"mcpServers": {"agent-memory": entry}, "imports": []}))
    return Server(config, "agent-memory", command, env)


def fresh(
    root: Path, title: str, real: object, name: str, n: int, label: str
) -> tuple[Server, Path]:
    """A new workspace of n bullets and an empty server for one scenario."""
    folder = root / title[:4] / label
    folder.mkdir(parents=True)
    ws, _ = make_workspace(folder, n)
    if real is None:
        return reference_server(folder, label), ws
    return Server(Path(str(real)), name, [], {}), ws


def timed(
    argv: list[str], *, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    return time.perf_counter() - started, done


def design_approach(server: Server, ws: Path) -> tuple[float, int]:
    """(a): one mcporter call per bullet, sequential — the prompt-driven design."""
    sys.path.insert(0, str(ROOT / "src"))
    from memfuse.workspace.journal import parse_bytes

    calls = 0
    started = time.perf_counter()
    for path in sorted((ws / "memory").glob("*.md")):
        for b in parse_bytes(path.read_bytes()).bullets:
            args = {"content": b.text, "type": "event",
                    "uri": f"event://journal/{path.stem}#{b.position}", "source": f"memory-sync:{path.stem}"}  # fmt: skip
            _t, done = timed(
                [*MCPORTER.split(), "--config", str(server.config), "call", f"{server.name}.remember",
                 "--args", "-", "--output", "text"],
                stdin=json.dumps(args).encode(),
            )  # fmt: skip
            if done.returncode != 0:
                raise SystemExit(f"(a) failed: {done.stdout[-300:]!r}")
            calls += 1
    return time.perf_counter() - started, calls


def memfuse_sync(
    server: Server, ws: Path, transport: str, jobs: int | None, *extra: str
) -> tuple[float, dict[str, object]]:
    argv = [MEMFUSE, "sync", "--all", "-w", str(ws), "--transport", transport, "--mcporter", MCPORTER,
            "--mcporter-config", str(server.config), "--server", server.name, "--json", *extra]  # fmt: skip
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    seconds, done = timed(argv)
    envelope = json.loads(done.stdout)
    if envelope["status"] != "ok":
        raise SystemExit(
            f"sync over {transport} was {envelope['status']}: {envelope['warnings'][:3]}"
        )
    return seconds, envelope["data"]


def raw_session(server: Server, ws: Path) -> tuple[float, int]:
    """(e): the limit — one server process, JSON-RPC lines written straight to its stdin."""
    sys.path.insert(0, str(ROOT / "src"))
    from memfuse.workspace.journal import parse_bytes

    requests = []
    for path in sorted((ws / "memory").glob("*.md")):
        for b in parse_bytes(path.read_bytes()).bullets:
            requests.append({"content": b.text, "type": "event",
                             "uri": f"event://journal/{path.stem}#{b.position}", "source": f"memory-sync:{path.stem}"})  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.Popen(server.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env={**os.environ, **server.env})  # fmt: skip
    assert proc.stdin and proc.stdout

    def ask(message: dict[str, object]) -> None:
        proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})  # fmt: skip
    proc.stdout.readline()
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i, args in enumerate(requests, start=1):
        ask(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "remember", "arguments": args},
            }
        )
        proc.stdout.readline()
    proc.stdin.close()
    proc.wait()
    return time.perf_counter() - started, len(requests)


def run_sync(server: Server, ws: Path, *extra: str) -> tuple[float, dict[str, object]]:
    """`memfuse sync` with no transport flag (the default, `auto`), as a user runs it."""
    argv = [MEMFUSE, "sync", "-w", str(ws), "--mcporter", MCPORTER, "--mcporter-config",
            str(server.config), "--server", server.name, "--now", "2026-11-30T23:00", "--json",
            *extra]  # fmt: skip
    seconds, done = timed(argv)
    envelope = json.loads(done.stdout)
    if envelope["status"] != "ok":
        raise SystemExit(f"sync {extra} was {envelope['status']}: {envelope['warnings'][:3]}")
    return seconds, envelope["data"]


def rebuild(root: Path, n: int) -> list[tuple[str, float, int]]:
    """The database is deleted after a full sync; the next plain sync rebuilds it."""
    server, ws = fresh(root, "rebuild", None, "agent-memory", n, f"r{n}")
    run_sync(server, ws, "--all")
    Path(server.env["AGENT_MEMORY_DB"]).unlink()
    seconds, data = run_sync(server, ws)
    counts = data["counts"]
    assert isinstance(counts, dict) and counts["restored"] == n, counts
    verify_s, verified = run_sync(server, ws, "--verify")
    index = verified["index"]
    assert isinstance(index, dict) and index["lost"] == 0 and index["present"] == n, index
    raw_server, raw_ws = fresh(root, "rebuild", None, "agent-memory", n, f"e{n}")
    raw_s, raw_calls = raw_session(raw_server, raw_ws)
    return [
        (f"rebuild of {n} after the database was deleted: plain `memfuse sync`, no transport"
         " flag", seconds, int(str(data["calls"]))),
        (f"raw stdio session, the same {n} remembers (the limit)", raw_s, raw_calls),
        (f"`memfuse sync --verify` of {n}, nothing lost", verify_s, int(str(verified["calls"]))),
    ]  # fmt: skip


def recall_speed(root: Path) -> list[str]:
    """`memfuse recall` over a year of journals (session transport, an empty store): the first
    run builds the local index, the next ones only check what changed."""
    ws, last = make_workspace(root / "recall-year", 365 * PER_JOURNAL, seed=13)
    server = reference_server(root / "recall-year", "recall")
    argv = [MEMFUSE, "recall", "billing migration rollback", "-w", str(ws), "--mcporter-config",
            str(server.config), "--now", f"{last}T23:00", "-q"]  # fmt: skip
    first, _ = timed(argv)
    warm = statistics.median(timed(argv)[0] for _ in range(5))
    status = [MEMFUSE, "status", "-w", str(ws), "-q"]  # start-up and nothing else, for scale
    startup = statistics.median(timed(status)[0] for _ in range(5))
    sys.path.insert(0, str(ROOT / "src"))
    from memfuse.recall.index import RecallIndex
    from memfuse.text.classify import Classifier
    from memfuse.workspace.layout import Workspace

    def own_work() -> float:
        started = time.perf_counter()
        workspace = Workspace(ws)
        index = RecallIndex(workspace.state)
        index.refresh(workspace, Classifier((), ()), lambda _m: None)
        index.search("billing migration rollback", 20)
        index.close()
        return time.perf_counter() - started

    own = statistics.median(own_work() for _ in range(5))
    lookup = ledger_lookup(root / "ledger-year", 365 * PER_JOURNAL)
    return [
        "\n### Recall (issue 16), a year of journals (365 × 40 bullets), session transport\n",
        "| measure | wall |",
        "|---|---:|",
        f"| first `memfuse recall` (builds the local index of 14 600 bullets) | {first * 1000:.0f} ms |",
        f"| next `memfuse recall`, nothing changed, median of 5 | {warm * 1000:.0f} ms |",
        f"| of which memfuse's own work: index check of 366 files + search, median of 5 | {own * 1000:.0f} ms |",
        f"| and the URIs of 20 stored results from a ledger of 14 600 entries, median of 5 | {lookup * 1000:.1f} ms |",
        f"| `memfuse status -q` (start-up alone), median of 5 | {startup * 1000:.0f} ms |",
        "",
        "The rest of a warm recall is starting the store's server and the MCP session, and the"
        " store's own recall. After a sync the index is already current (sync refreshes it),"
        " so the agent's first recall is a warm one. Quality (hit@1, hit@5, MRR with and"
        " without a reranker) is in docs/recall-quality.md, from benchmarks/recall_eval.py.",
    ]


def ledger_lookup(root: Path, entries: int) -> float:
    """recall's read-only ledger query (memfuse.ledger.ledger.uris_of) for 20 memory ids, in seconds."""
    from memfuse.ledger.ledger import Ledger, uris_of
    from memfuse.state.folder import StateFolder
    from memfuse.state.sqlite import immediate

    state = StateFolder(root / "workspace" / ".memfuse")
    state.path.mkdir(parents=True, mode=0o700)
    ledger = Ledger(state)  # its schema; the rows in one transaction (set-up, not measured)
    rows = [(f"d#0930-{n}", "2026-11-30", f"h{n}", "added", f"event://journal/d#0930-{n}",
             "event", f"id-{n}", 1, "2026-11-30T22:00:00") for n in range(entries)]  # fmt: skip
    with immediate(ledger.db):
        ledger.db.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    ledger.close()
    wanted = [f"id-{n}" for n in range(0, entries, entries // 20)][:20]

    def once() -> float:
        started = time.perf_counter()
        assert len(uris_of(state, wanted)) == 20
        return time.perf_counter() - started

    return statistics.median(once() for _ in range(5))


def median_of(runs: int, argv: list[str]) -> float:
    return statistics.median(timed(argv)[0] for _ in range(runs))


def parse_year(root: Path) -> tuple[float, int]:
    sys.path.insert(0, str(ROOT / "src"))
    from memfuse.workspace.journal import parse_bytes

    ws, _ = make_workspace(root / "year", 365 * PER_JOURNAL, seed=11)
    files = sorted((ws / "memory").glob("*.md"))
    started = time.perf_counter()
    count = sum(len(parse_bytes(p.read_bytes()).bullets) for p in files)
    return time.perf_counter() - started, count


def peak_memory_kb(server: Server, ws: Path) -> int:
    code = (
        "import resource, sys\n"
        "from memfuse.cli import main\n"
        f"sys.argv = ['memfuse', 'sync', '--all', '-w', {str(ws)!r}, '--transport', 'session',"
        f" '--mcporter-config', {str(server.config)!r}, '-q']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    done = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True)
    return int(done.stdout.strip().splitlines()[-1])


def machine() -> str:
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    node = subprocess.run(
        ["node", "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    mcporter = subprocess.run(
        [*MCPORTER.split(), "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return (f"{os.cpu_count()} cores ({cpu}), Linux {platform.release()}, Python {platform.python_version()},"
            f" Node {node}, mcporter {mcporter}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bullets", type=int, default=1000)
    parser.add_argument("--real-config", type=Path, help="mcporter config of a real agent-memory")
    parser.add_argument("--real-server", default="agent-memory")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/ alone")
    parser.add_argument(
        "--rebuild", type=int, nargs="*", default=[1000, 10000], help="rebuild sizes to measure"
    )
    parser.add_argument(
        "--only-recall", action="store_true",
        help="measure only the recall rows and replace that section of docs/performance.md",
    )  # fmt: skip
    options = parser.parse_args()
    n = options.bullets
    if options.only_recall:
        with tempfile.TemporaryDirectory(prefix="memfuse-bench-") as tmp:
            rows = recall_speed(Path(tmp))
        print("\n".join(rows))
        if not options.no_write:
            replace_section("### Recall", rows)
        return
    out: list[str] = []
    say = lambda line: (print(line, flush=True), out.append(line))  # noqa: E731

    with tempfile.TemporaryDirectory(prefix="memfuse-bench-") as tmp:
        root = Path(tmp)
        targets: list[tuple[str, object]] = [
            ("reference server (python -m memfuse.refserver)", None)
        ]
        if options.real_config:
            targets.append(
                (
                    f"real server {options.real_server} from {options.real_config}",
                    options.real_config,
                )
            )
        for title, real in targets:
            say(f"\n### {n} bullets, {title}\n")
            say("| approach | wall (s) | MCP calls | calls/s | vs (a) | vs (e) |")
            say("|---|---:|---:|---:|---:|---:|")
            rows: dict[str, tuple[float, int]] = {}
            server, ws = fresh(root, title, real, options.real_server, n, "a")
            rows["(a) design: one `mcporter call` per bullet, sequential"] = design_approach(
                server, ws
            )
            for label, transport, jobs in (
                ("b", "mcporter", 1),
                ("c", "mcporter", None),
                ("d", "session", None),
            ):
                server, ws = fresh(root, title, real, options.real_server, n, label)
                seconds, data = memfuse_sync(server, ws, transport, jobs)
                name = {"b": "(b) memfuse sync, mcporter, --jobs 1", "c": "(c) memfuse sync, mcporter, default --jobs 4",
                        "d": "(d) memfuse sync, --transport session"}[label]  # fmt: skip
                rows[name] = (seconds, int(str(data["calls"])))
                if label == "d":
                    again, data2 = memfuse_sync(server, ws, "session", None)
                    rows["(f) memfuse sync again, nothing new"] = (again, int(str(data2["calls"])))
            if real is None:
                server, ws = fresh(root, title, real, options.real_server, n, "e")
                rows["(e) raw stdio session, same calls (the limit)"] = raw_session(server, ws)
            base = next(v for k, v in rows.items() if k.startswith("(a)"))[0]
            limit = next((v for k, v in rows.items() if k.startswith("(e)")), (None, 0))[0]
            for name, (seconds, calls) in sorted(rows.items()):
                rate = f"{calls / seconds:.0f}" if calls else "–"
                vs_e = f"{seconds / limit:.2f}×" if limit else "–"
                say(
                    f"| {name} | {seconds:.2f} | {calls} | {rate} | {base / seconds:.1f}× faster | {vs_e} |"
                )

        say("\n### Rebuilding the index (issue 13), reference server, default transport\n")
        say("| scenario | wall (s) | MCP calls | vs the raw session |")
        say("|---|---:|---:|---:|")
        for size in options.rebuild:
            rows_r = rebuild(root, size)
            limit_r = rows_r[1][1]
            for name, seconds, calls in rows_r:
                ratio = f"{seconds / limit_r:.2f}×" if "verify" not in name else "–"
                say(f"| {name} | {seconds:.2f} | {calls} | {ratio} |")

        for line in recall_speed(root):
            say(line)

        say("\n### Start-up, parsing, memory, surface\n")
        say("| measure | value |")
        say("|---|---:|")
        say(
            f"| `memfuse --help`, median of 5 | {median_of(5, [MEMFUSE, '--help']) * 1000:.0f} ms |"
        )
        seconds, count = parse_year(root)
        say(
            f"| parse a year of journals (365 files × 40 bullets = {count}) | {seconds * 1000:.0f} ms |"
        )
        server, ws = reference_server(root / "mem", "mem"), make_workspace(root / "mem", n)[0]
        say(
            f"| peak RSS of memfuse during a {n}-bullet session sync | {peak_memory_kb(server, ws) / 1024:.0f} MB |"
        )
        server, ws = reference_server(root / "surf", "surf"), make_workspace(root / "surf", 200)[0]
        memfuse_sync(server, ws, "session", None)
        one_call = median_of(
            5,
            [
                *MCPORTER.split(),
                "--config",
                str(server.config),
                "call",
                "agent-memory.status",
                "--output",
                "text",
            ],
        )
        surface = median_of(5, [MEMFUSE, "surface", "-w", str(ws), "--mcporter", MCPORTER,
                                "--mcporter-config", str(server.config), "-q"])  # fmt: skip
        say(f"| one `mcporter call agent-memory.status`, median of 5 | {one_call * 1000:.0f} ms |")
        session = median_of(5, [MEMFUSE, "surface", "-w", str(ws), "--transport", "session",
                                "--mcporter-config", str(server.config), "-q"])  # fmt: skip
        say(
            f"| `memfuse surface` (4 reads via mcporter, concurrent), median of 5 | {surface * 1000:.0f} ms ({surface / one_call:.2f}× one call) |"
        )
        say(
            f"| `memfuse surface --transport session`, median of 5 | {session * 1000:.0f} ms ({session / one_call:.2f}× one call) |"
        )

    if not options.no_write:
        write_report(n, out)


def replace_section(title: str, rows: list[str]) -> None:
    """Put `rows` in place of the section starting with `title` (or before the start-up one)."""
    path = ROOT / "docs" / "performance.md"
    text = path.read_text()
    block = "\n".join(rows).strip("\n") + "\n"
    start = text.find(title)
    if start >= 0:
        end = text.find("\n### ", start + 1)
        text = text[:start] + block + (text[end:] if end >= 0 else "")
    else:
        anchor = text.find("### Start-up")
        text = text[:anchor] + block + "\n" + text[anchor:] if anchor >= 0 else text + "\n" + block
    path.write_text(text)
    print(f"\nupdated {path}")


DEVELOPMENT_TITLE = "## Development"


def write_report(n: int, lines: list[str]) -> None:
    path = ROOT / "docs" / "performance.md"
    head = f"""# Performance

Measured by `benchmarks/bench.py` on {datetime.now().strftime("%Y-%m-%d %H:%M")} — {machine()}.
Reproduce with one command from a set-up checkout:

```bash
.venv/bin/python benchmarks/bench.py --bullets {n}
```

Each approach syncs the same {n} bullets ({PER_JOURNAL} per journal) into a fresh database.
(a) is the design documents' approach, one `mcporter call … remember` per bullet in sequence
(with `--args -`, the safe form). (e) is the limit: one server process fed JSON-RPC lines
directly, no client library. "vs (a)" is how many times faster than (a); "vs (e)" is the wall
time as a multiple of (e). The rebuild rows delete the database after a full sync and time
the next plain `memfuse sync` (no transport flag: `auto` picks the session for this stdio
server), against a raw session sending the same remembers into a fresh database; the verify
row is `memfuse sync --verify` of the whole ledger with nothing lost (the status probe, three
prefix listings). Every number below was measured in the run named above.
"""
    # The development section (the test suite's time) is measured by hand: kept as it is.
    old = path.read_text() if path.exists() else ""
    development = old[old.find(DEVELOPMENT_TITLE) :] if DEVELOPMENT_TITLE in old else ""
    body = head + "\n".join(lines) + "\n"
    path.write_text(body + ("\n" + development if development else ""))
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
