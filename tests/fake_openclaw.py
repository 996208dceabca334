"""A stand-in for the `openclaw` CLI's cron commands, as the package 2026.9.6 has them
(dist/cron-cli-*.mjs, dist/list-jobs-*.mjs): `cron list --all --json`, `cron add --json
--declaration-key=…` converging a job in place, `cron edit … -- ID`, `cron rm --json -- ID` and
`gateway call cron.list --json --params=…`. Like commander, an argument that starts with a dash
before `--` is an option, and an unknown one is refused. State is a JSON file beside it
(`FAKE_OPENCLAW_STATE`); every argv is appended to `calls.jsonl` there. `FAKE_OPENCLAW_PAGE`
makes `cron list` print one page only, as a CLI before 2026.9 did, and the Gateway's pages
that small; `FAKE_OPENCLAW_FAIL` is
printed on stderr with exit 1 instead of any answer."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

STATE = Path(os.environ["FAKE_OPENCLAW_STATE"])
FLAGS = {
    "--json", "--all", "--exact", "--announce", "--best-effort-deliver", "--no-deliver",
    "--failure-alert",
}  # fmt: skip
VALUED = {
    "--declaration-key", "--name", "--description", "--cron", "--tz", "--session", "--wake",
    "--command-argv", "--command-env", "--message", "--timeout-seconds",
    "--failure-alert-after", "--params",
}  # fmt: skip


def parse(args: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    opts: dict[str, list[str]] = {}
    positional: list[str] = []
    rest = False
    for arg in args:
        if rest or not arg.startswith("-"):
            positional.append(arg)
        elif arg == "--":
            rest = True
        else:
            name, eq, value = arg.partition("=")
            if name in FLAGS and not eq:
                opts.setdefault(name, []).append("")
            elif name in VALUED and eq:
                opts.setdefault(name, []).append(value)
            else:
                fail(f"error: unknown option '{arg}'")
    return opts, positional


def fail(message: str) -> None:
    print(message, file=sys.stderr)
    sys.exit(1)


def page(jobs: list[dict[str, object]], offset: int, limit: int) -> dict[str, object]:
    chunk = jobs[offset : offset + limit]
    more = offset + len(chunk) < len(jobs)
    return {"jobs": chunk, "total": len(jobs), "offset": offset, "limit": limit,
            "hasMore": more, "nextOffset": offset + len(chunk) if more else None}  # fmt: skip


def main(argv: list[str]) -> None:
    with (STATE.parent / "calls.jsonl").open("a") as calls:
        calls.write(json.dumps(argv) + "\n")
    if os.environ.get("FAKE_OPENCLAW_FAIL"):
        fail(os.environ["FAKE_OPENCLAW_FAIL"])
    state = json.loads(STATE.read_text()) if STATE.exists() else {"jobs": []}
    jobs: list[dict[str, object]] = state["jobs"]
    group, command, *args = argv
    opts, positional = parse(args)
    one = {k: v[-1] for k, v in opts.items()}
    size = int(os.environ.get("FAKE_OPENCLAW_PAGE") or 200)
    if (group, command) == ("cron", "list"):
        answer: object = page(jobs, 0, size)
    elif (group, command) == ("gateway", "call") and positional == ["cron.list"]:
        params = json.loads(one["--params"])
        answer = page(jobs, params["offset"], min(params["limit"], size))
    elif (group, command) == ("cron", "add"):
        spec = {
            "name": one["--name"], "declarationKey": one.get("--declaration-key"),
            "description": one.get("--description"),
            "schedule": {"kind": "cron", "expr": one["--cron"], "staggerMs": 0},
            "sessionTarget": one["--session"], "wakeMode": one.get("--wake", "now"),
            "payload": {"kind": "command", "argv": json.loads(one["--command-argv"]),
                        "env": dict(e.split("=", 1) for e in opts.get("--command-env", []))},
            "delivery": {"mode": "announce", "bestEffort": True},
        }  # fmt: skip
        key = spec["declarationKey"]
        existing = next((j for j in jobs if key and j.get("declarationKey") == key), None)
        if existing is None:
            job = {"id": str(uuid.uuid4()), "enabled": True, **spec}
            jobs.append(job)
            answer = {"created": True, "job": job}
        else:
            updated = any(existing.get(k) != v for k, v in spec.items())
            existing.update(spec)
            answer = {**existing, "created": False, "updated": updated, "job": existing}
    elif (group, command) == ("cron", "edit"):
        job = next((j for j in jobs if j.get("id") == positional[0]), None)
        if job is None:
            fail(f"Automation not found: {positional[0]}")
        job["failureAlert"] = {"after": int(one["--failure-alert-after"])}
        answer = job
    elif (group, command) == ("cron", "rm"):
        before = len(jobs)
        jobs[:] = [j for j in jobs if j.get("id") != positional[0]]
        if len(jobs) == before:
            fail(f"Automation not found: {positional[0]}")
        answer = {"ok": True, "removed": True}
    else:
        fail(f"error: unknown command '{group} {command}'")
    STATE.write_text(json.dumps(state))
    print(json.dumps(answer, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
