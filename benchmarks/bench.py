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
from typing import Any

import bounds
from sections import replace_section

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


def make_workspace(
    root: Path, bullets: int, seed: int = 7, per_journal: int = PER_JOURNAL
) -> tuple[Path, date]:
    """`bullets` bullets over journals of `per_journal` (three sessions each), ending on the
    returned day."""
    rng = random.Random(seed)
    ws = root / "workspace"
    (ws / "memory").mkdir(parents=True)
    days = -(-bullets // per_journal)
    last = date(2026, 11, 30)
    n = 0
    for d in range(days):
        day = last - timedelta(days=days - 1 - d)
        lines, written = [], 0
        for section in ("09:30", "14:00", "22:00"):
            lines.append(f"## {section}")
            for _ in range(per_journal // 3 + 1):
                if n < bullets and written < per_journal:
                    lines.append(f"- {bullet(rng, n)}")
                    n, written = n + 1, written + 1
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
    seconds, envelope = sync_envelope(server, ws, *extra)
    return seconds, envelope["data"]


def sync_envelope(
    server: Server, ws: Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[float, dict[str, Any]]:
    """run_sync's wall seconds and whole envelope (`env`: the whole environment of the run,
    e.g. another memfuse's source first on PYTHONPATH, benchmarks/acceptance.py)."""
    argv = [MEMFUSE, "sync", "-w", str(ws), "--mcporter", MCPORTER, "--mcporter-config",
            str(server.config), "--server", server.name, "--now", "2026-11-30T23:00", "--json",
            *extra]  # fmt: skip
    seconds, done = timed(argv, env=env)
    envelope = json.loads(done.stdout)
    if envelope["status"] != "ok":
        raise SystemExit(f"sync {extra} was {envelope['status']}: {envelope['warnings'][:3]}")
    return seconds, envelope


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


def state_bytes(ws: Path) -> int:
    """The size of memfuse's state folder for a workspace (ledgers, history, recall index)."""
    sys.path.insert(0, str(ROOT / "src"))
    from memfuse.state.folder import default_state_dir

    folder = default_state_dir(ws, os.environ)
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def touch(journal: Path, n: int) -> None:
    """The agent adds one bullet to a journal."""
    with journal.open("a", encoding="utf-8") as fh:
        fh.write(f"- a late note number {n} about the staging cutover\n")


def year_rows(root: Path) -> list[str]:
    """A year of journals synced into the reference server: the plain sync after one old
    journal changed (issue 25), and recall, one question and a batch of 500 (issue 27)."""
    server = reference_server(root / "year-store", "year")
    ws, last = make_workspace(root / "year-store", 365 * PER_JOURNAL, seed=13)
    run_sync(server, ws, "--all")
    changed = ws / "memory" / f"{last - timedelta(days=200)}.md"  # a journal of last spring
    one_server = reference_server(root / "one-store", "one")
    one_ws = root / "one-store" / "workspace"
    (one_ws / "memory").mkdir(parents=True)
    shutil.copy(changed, one_ws / "memory" / changed.name)  # the same journal, alone
    run_sync(one_server, one_ws, "--all")
    touch(changed, 0)
    year_s, year = sync_envelope(server, ws)
    assert year["data"]["counts"]["added"] == 1, year["data"]["counts"]
    touch(one_ws / "memory" / changed.name, 0)
    one_s, one = sync_envelope(one_server, one_ws)
    assert one["data"]["counts"]["added"] == 1, one["data"]["counts"]
    year_own, one_own = (e["duration_ms"] - e["store_ms"] for e in (year, one))

    now = ["--now", f"{last}T23:00"]
    argv = [MEMFUSE, "recall", "billing migration rollback", "-w", str(ws), "--mcporter-config",
            str(server.config), *now, "-q"]  # fmt: skip
    single = statistics.median(timed(argv)[0] for _ in range(5))
    rng = random.Random(5)
    questions = [" ".join(rng.sample(WORDS, 3)) for _ in range(500)]
    batch = [MEMFUSE, "recall", "--batch", "-w", str(ws), "--mcporter-config", str(server.config),
             *now]  # fmt: skip
    batch_s, done = timed(batch, stdin=("\n".join(questions) + "\n").encode())
    envelopes = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(envelopes) == 500 and all(e["status"] == "ok" for e in envelopes)
    own = sorted(e["duration_ms"] - e["data"]["store_ms"] for e in envelopes)
    store = statistics.median(e["data"]["store_ms"] for e in envelopes)
    status = [MEMFUSE, "status", "-w", str(ws), "-q"]  # start-up and nothing else, for scale
    startup = statistics.median(timed(status)[0] for _ in range(5))
    ten = ten_years(root, questions[:100])
    return [
        "\n### A year of journals (365 × 40 = 14 600 bullets), reference server, session\n",
        "| measure | wall |",
        "|---|---:|",
        f"| plain `memfuse sync`, one journal of 200 days ago changed (one bullet added) | {year_s * 1000:.0f} ms, of which memfuse's own {year_own} ms |",
        f"| plain `memfuse sync` of a workspace of that one journal, one bullet added | {one_s * 1000:.0f} ms, of which memfuse's own {one_own} ms |",
        f"| the year's sync against the one journal's | {year_s / one_s:.2f}× the wall, {year_own / max(one_own, 1):.2f}× memfuse's own |",
        f"| one `memfuse recall`, the index current, median of 5 | {single * 1000:.0f} ms |",
        f"| `memfuse recall --batch`, 500 questions, one store session | {batch_s:.1f} s ({batch_s * 1000 / 500:.0f} ms a question) |",
        f"| of which memfuse's own time per question (duration less the store's), median / 95th percentile | {statistics.median(own):.0f} ms / {own[int(len(own) * 0.95)]:.0f} ms |",
        f"| and the store's recall per question, median | {store:.0f} ms |",
        f"| `memfuse status -q` (start-up alone), median of 5 | {startup * 1000:.0f} ms |",
        f"| 10×: ten years (146 000 bullets), the journals alone (`--without store`): building the index | {ten[0]:.1f} s |",
        f"| 10×: memfuse's own time per question over 100 of the questions, median / 95th percentile | {ten[1]:.0f} ms / {ten[2]:.0f} ms |",
        "",
        "A plain sync `stat`s every journal against the ledger's record and reads only the one"
        " that changed, so over a year it costs the one journal's work plus a `stat` a file."
        " The rest of one recall is starting the store's server and its MCP session; a batch"
        " pays that once. The questions are three words of the generator's 36-word vocabulary,"
        " so each word is in one bullet of six and a question matches most of them, by their own"
        " words or their neighbours': the worst case for FTS5, which ranks every row that"
        " holds a term (on LoCoMo's real conversations a question costs a"
        " few milliseconds, docs/recall-quality.md). At 10× (the rows above) a question's own time grew"
        f" {ten[1] / max(statistics.median(own), 1):.1f}× for 10× the bullets: linear in the"
        " bullets its words match. 100× was not measured; growing the same way it would be"
        " about a second a question on this vocabulary. The index file"
        " grows with the bullets; it is derived and can be deleted.",
    ]


def own_and_wall(runs: int, argv: list[str]) -> tuple[float, float]:
    """Median wall seconds of `runs` runs, and median of memfuse's own seconds (the envelope's
    duration less the time a store call was in flight, server start included)."""
    walls, owns = [], []
    for _ in range(runs):
        seconds, done = timed([*argv, "--json"])
        envelope = json.loads(done.stdout)
        if envelope["status"] != "ok":
            raise SystemExit(f"{argv[1]} was {envelope['status']}: {envelope['warnings'][:3]}")
        walls.append(seconds)
        owns.append((envelope["duration_ms"] - envelope["store_ms"]) / 1000)
    return statistics.median(walls), statistics.median(owns)


def ten_years(root: Path, questions: list[str]) -> tuple[float, float, float]:
    """The local index at 10× a year, without a store (the reference server would take the
    benchmark's hour to take 146 000 remembers): build seconds, and the median and 95th
    percentile of memfuse's own milliseconds per question."""
    ws, last = make_workspace(root / "ten-years", 3650 * PER_JOURNAL, seed=17)
    batch = [MEMFUSE, "recall", "--batch", "-w", str(ws), "--without", "store",
             "--now", f"{last}T23:00"]  # fmt: skip
    build, done = timed(batch, stdin=b"warm up\n")
    _s, done = timed(batch, stdin=("\n".join(questions) + "\n").encode())
    own = sorted(json.loads(line)["duration_ms"] for line in done.stdout.splitlines())
    assert len(own) == len(questions)
    return build, statistics.median(own), own[int(len(own) * 0.95)]


def scale_rows(root: Path) -> list[str]:
    """100 large journals at two sizes (4 000 and 16 000 bullets): surface, a sync with nothing
    to send, and the state folder after a month of one-bullet syncs (issue 29)."""
    rows = []
    measured: dict[int, dict[str, tuple[float, float]]] = {}
    for per in (40, 160):
        label = f"scale{per}"
        server = reference_server(root / label, label)
        ws, last = make_workspace(root / label, 100 * per, seed=per, per_journal=per)
        run_sync(server, ws, "--all")
        common = ["-w", str(ws), "--transport", "session", "--mcporter-config", str(server.config),
                  "--now", f"{last}T23:00"]  # fmt: skip
        measured[per] = {
            "surface": own_and_wall(3, [MEMFUSE, "surface", *common]),
            "sync": own_and_wall(3, [MEMFUSE, "sync", *common]),
        }
        for key, what in (("surface", "`memfuse surface`"),
                          ("sync", "plain `memfuse sync`, nothing to send")):  # fmt: skip
            wall, own = measured[per][key]
            rows.append(
                f"| {100 * per} bullets: {what}, median of 3 | {wall * 1000:.0f} ms | {own * 1000:.0f} ms |"
            )
        if per == 40:
            before = state_bytes(ws)
            journal = ws / "memory" / f"{last}.md"
            for n in range(30):
                touch(journal, n)
                run_sync(server, ws)
            rows.append(
                f"| {100 * per} bullets: the state folder before, and after 30 syncs of one added bullet each | {before / 1024:.0f} KiB → {state_bytes(ws) / 1024:.0f} KiB | |"
            )

    def ratio(key: str, which: int) -> str:
        return f"{measured[160][key][which] / measured[40][key][which]:.2f}×"

    return [
        "\n### 100 large journals (issue 29), reference server, session\n",
        "| measure | wall | memfuse's own |",
        "|---|---:|---:|",
        *rows,
        "",
        "memfuse's own time is the envelope's `duration_ms` less its `store_ms` (the wall time a"
        " store call was in flight, the server's start included). Four times the bullets (40 →"
        f" 160 a journal) costs surface {ratio('surface', 0)} in wall time and"
        f" {ratio('surface', 1)} of memfuse's own; a sync with nothing to send"
        f" {ratio('sync', 0)} and {ratio('sync', 1)}. Surface asks the store for a bounded"
        " number of candidates (four times a section's cap) and reads the journals of its last"
        " days for the fallback, so its own time grows with the size of those few journals"
        " (here four times larger), not with how many there are; a plain sync with nothing"
        " changed reads no journal, only `stat`s each against the ledger. The rest of the wall"
        " time is the store's own work on a larger database. 10× and 100× the journals:"
        " memfuse's part grows with the count of journal files (one `stat` each) and with the"
        " size of the last days' journals, linearly. The state folder grows by the rows of the"
        " bullets added, not with how often a journal is touched (five attempts kept per"
        " bullet; the recall index merges and frees its pages after each refresh).",
    ]


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
        "--only", choices=sorted(SECTIONS),
        help="measure one section and replace it in docs/performance.md",
    )  # fmt: skip
    options = parser.parse_args()
    n = options.bullets
    # memfuse's state for the benchmark's workspaces stays in the benchmark's folder.
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="memfuse-bench-state-")
    if options.only:
        title, measure = SECTIONS[options.only]
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="memfuse-bench-") as tmp:
            rows = measure(Path(tmp))
        took = time.monotonic() - started
        rows.insert(1, f"Measured on {datetime.now():%Y-%m-%d %H:%M} in {took:.0f} s on {machine()}"
                       f" by `.venv/bin/python benchmarks/bench.py --only {options.only}`.\n")  # fmt: skip
        print("\n".join(rows))
        if not options.no_write:
            replace_section(
                ROOT / "docs" / "performance.md", title, "\n".join(rows), before="### Start-up"
            )
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

        for _title, measure in SECTIONS.values():
            for line in measure(root):
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


SECTIONS = {
    "year": ("### A year of journals", year_rows),
    "scale": ("### 100 large journals", scale_rows),
    "bounds": (
        "### What one question and one refresh cost",
        lambda root: bounds.rows(root, sys.modules[__name__]),
    ),
}


DEVELOPMENT_TITLE = "## Development"
RUN_TITLE = "## The 1000-bullet run"


def write_report(n: int, lines: list[str]) -> None:
    path = ROOT / "docs" / "performance.md"
    old = path.read_text() if path.exists() else ""
    # The page's index (which benchmark backs which section: benchmarks/run.py) is kept.
    index = old[: old.find(RUN_TITLE)] if RUN_TITLE in old else "# Performance\n\n"
    head = f"""{index}{RUN_TITLE}

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
    development = old[old.find(DEVELOPMENT_TITLE) :] if DEVELOPMENT_TITLE in old else ""
    body = head + "\n".join(lines) + "\n"
    path.write_text(body + ("\n" + development if development else ""))
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
