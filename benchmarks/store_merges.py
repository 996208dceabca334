"""Issue 39's families 1 and 7, counted: store calls of `memfuse sync` when a bullet the store
folded into another's memory is edited, against the reference server's compat 2, 4 and 5.

Run from a set-up checkout (`scripts/setup.sh`):

    .venv/bin/python benchmarks/store_merges.py                  # this checkout
    .venv/bin/python benchmarks/store_merges.py --rev af1b477    # the same, for a commit

`--rev` measures a commit's `src/` (extracted with `git archive` into a temporary folder,
removed at the end) with this venv's Python. Each run is the `memfuse` CLI over its session
transport on a fresh reference server (auto-ingest off) in a HOME of its own; every figure is
the `calls` of `sync --json` (the status probe included), and "held" says whether memories
in the store hold the edited bullet's text and its twin's after the edit's sync.

- family 1: day 1 `- Maria prefers the weekly sync meeting on Tuesday mornings at nine`,
  day 2 the same plus " sharp" (4.x/5.x merge it into day 1's memory), both synced; day 2
  edited to "at ten sharp": the edit's sync, the two syncs after it, `status -q`'s exit.
- family 7: one journal of N copies of one routine note, synced; copy N/2 edited: the edit's
  sync and the one after; then copy 1 (the one whose memory the others share) edited.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NINE = "Maria prefers the weekly sync meeting on Tuesday mornings at nine"
TEN = "Maria prefers the weekly sync meeting on Tuesday mornings at ten sharp"
ROUTINE = "Checked the backup logs and rotated the nightly snapshots as usual"
EDITED = "Checked the backup logs; the nightly snapshot of the billing database failed"
NOW = "2026-11-29T22:00"


class Run:
    """memfuse from one source tree, on one fresh reference server of one generation."""

    def __init__(self, src: Path, root: Path, generation: int) -> None:
        self.src = src
        self.ws = root / "workspace"
        (self.ws / "memory").mkdir(parents=True)
        self.db = root / "agent-memory.db"
        self.home = root / "home"
        self.home.mkdir()
        config = root / "mcporter.json"
        server = {
            "command": sys.executable, "args": ["-m", "memfuse.refserver"],
            "env": {"AGENT_MEMORY_DB": str(self.db), "AGENT_MEMORY_COMPAT": str(generation),
                    "AGENT_MEMORY_AUTO_INGEST": "0", "PYTHONPATH": str(src)},
        }  # fmt: skip
        config.write_text(json.dumps({"mcpServers": {"agent-memory": server}, "imports": []}))
        self.flags = ["--mcporter-config", str(config), "--transport", "session"]

    def memfuse(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "HOME": str(self.home), "PYTHONPATH": str(self.src)}
        env = {k: v for k, v in env.items() if not k.startswith(("MEMFUSE_", "AGENT_MEMORY_"))}
        flags = self.flags if args[0] == "sync" else []  # status reads only memfuse's state
        argv = [sys.executable, "-m", "memfuse", *args, "-w", str(self.ws), *flags]
        return subprocess.run(argv, env=env, capture_output=True, text=True, check=False)

    def sync(self, now: str = NOW) -> int:
        done = self.memfuse("sync", "--now", now, "--json")
        data: dict[str, Any] = json.loads(done.stdout)["data"]
        return int(data["calls"])

    def journal(self, day: str, text: str) -> None:
        (self.ws / "memory" / f"{day}.md").write_text(text, encoding="utf-8")

    def held(self, text: str) -> bool:
        with sqlite3.connect(self.db) as db:
            return any(text in row[0] for row in db.execute("SELECT content FROM memories"))


def family_1(run: Run) -> dict[str, Any]:
    run.journal("2026-11-28", f"- {NINE}\n")
    run.sync("2026-11-28T22:00")
    run.journal("2026-11-29", f"- {NINE} sharp\n")
    run.sync()
    run.journal("2026-11-29", f"- {TEN}\n")
    edit = run.sync()
    held = run.held(TEN) and run.held(NINE)
    after = [run.sync(), run.sync()]
    status = run.memfuse("status", "-q", "--now", NOW).returncode
    return {"edit": edit, "held": held, "after": after, "status": status}


def family_7(run: Run, copies: int) -> dict[str, Any]:
    lines = [f"- {ROUTINE}\n"] * copies
    run.journal("2026-11-29", "".join(lines))
    first = run.sync()
    lines[copies // 2] = f"- {EDITED}\n"
    run.journal("2026-11-29", "".join(lines))
    edit = run.sync()
    held = run.held(EDITED) and run.held(ROUTINE)
    after = run.sync()
    lines[0] = f"- {EDITED} (first copy)\n"
    run.journal("2026-11-29", "".join(lines))
    first_copy = run.sync()
    held_first = run.held(f"{EDITED} (first copy)") and run.held(ROUTINE)
    return {"first": first, "edit": edit, "held": held, "after": after,
            "first_copy": first_copy, "held_first": held_first}  # fmt: skip


def source(rev: str | None, scratch: Path) -> Path:
    """This checkout's src/, or a commit's extracted with `git archive`."""
    if rev is None:
        return ROOT / "src"
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(scratch / "rev", filter="data")
    return scratch / "rev" / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="measure this commit's src/ instead of this checkout's")
    parser.add_argument("--copies", type=int, default=600)
    parser.add_argument("--generations", default="2,4,5")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memfuse-merges-") as tmp:
        scratch = Path(tmp)
        src = source(args.rev, scratch)
        print(f"memfuse from {args.rev or 'this checkout'}; calls include the status probe")
        for generation in (int(g) for g in args.generations.split(",")):
            one = family_1(Run(src, scratch / f"f1-{generation}", generation))
            seven = family_7(Run(src, scratch / f"f7-{generation}", generation), args.copies)
            print(f"compat {generation}: family 1 {json.dumps(one)}")
            print(f"compat {generation}: family 7 ({args.copies} copies) {json.dumps(seven)}")


if __name__ == "__main__":
    main()
