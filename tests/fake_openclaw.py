"""A stand-in for the `openclaw` CLI's cron commands, as the package 2026.9.6 has them
(dist/cron-cli-*.mjs, dist/list-jobs-*.mjs): `cron list --all --json`, `cron add --json
--declaration-key=…` converging a job in place, `cron edit … -- ID`, `cron rm --json -- ID`,
`gateway call cron.list --json --params=…` and `gateway call cron.add --json --params=…` (the
RPC `cron add` makes, which also takes a `failureAlert`; its parameters a closed object; on a
job it converges, it sets only what OpenClaw's does), `gateway call cron.update` by id; `config get PATH --json`, `config unset PATH` and `config set --batch-json=…`
on the configuration file OpenClaw reads (`OPENCLAW_CONFIG_PATH`, else `openclaw.json` in
`OPENCLAW_STATE_DIR` or `~/.openclaw`, plain JSON here), and `hooks enable|disable NAME` as
2026.9.6 writes them (`hooks.internal.entries.NAME.enabled`, the master switch on; a hook
without its folder under `<state>/hooks/` is refused). Like commander, an argument that starts with a dash
before `--` is an option, and an unknown one is refused. State is a JSON file beside it
(`FAKE_OPENCLAW_STATE`); every argv is appended to `calls.jsonl` there. `FAKE_OPENCLAW_PAGE`
makes `cron list` print one page only, as a CLI before 2026.9 did, and the Gateway's pages
that small; `FAKE_OPENCLAW_FAIL` is
printed on stderr with exit 1 instead of any answer. `respond` is the same call in-process
(the unit tier's flows: a process a call was ~33 ms of CPU, ~300 calls). `gateway call
config.get` says the file's revision (`hash`: here its digest), and `gateway call config.patch`
merges its `raw` (a merge patch) into the file when its `baseHash` is that revision."""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import NoReturn

# pyjson5 and uuid are imported where they are used: each `openclaw` call is a process of its
# own (~200 in the unit tier), and the two were a third of its start (~10 of ~33 ms of CPU).

FLAGS = {
    "--json", "--all", "--exact", "--announce", "--best-effort-deliver", "--no-deliver",
    "--failure-alert",
}  # fmt: skip
VALUED = {
    "--declaration-key", "--name", "--description", "--cron", "--tz", "--session", "--wake",
    "--command-argv", "--command-env", "--message", "--timeout-seconds",
    "--failure-alert-after", "--params", "--display-name", "--agent", "--batch-json",
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


class Refused(Exception):
    """The call exits 1, having printed these."""

    def __init__(self, stderr: str, stdout: str = "") -> None:
        super().__init__(stderr)
        self.stderr, self.stdout = stderr, stdout


def fail(message: str) -> NoReturn:
    raise Refused(message + "\n")


def state_file() -> Path:
    return Path(os.environ["FAKE_OPENCLAW_STATE"])


def page(jobs: list[dict[str, object]], offset: int, limit: int) -> dict[str, object]:
    chunk = jobs[offset : offset + limit]
    more = offset + len(chunk) < len(jobs)
    return {"jobs": chunk, "total": len(jobs), "offset": offset, "limit": limit,
            "hasMore": more, "nextOffset": offset + len(chunk) if more else None}  # fmt: skip


def state_dir() -> Path:
    home = Path(os.environ.get("HOME") or "/nonexistent")
    return Path(os.environ.get("OPENCLAW_STATE_DIR") or home / ".openclaw")


def config_file() -> Path:
    return Path(os.environ.get("OPENCLAW_CONFIG_PATH") or state_dir() / "openclaw.json")


def load_config() -> dict[str, object]:
    import pyjson5

    path = config_file()
    text = path.read_text() if path.exists() else "{}"  # OpenClaw reads JSON5
    try:
        return pyjson5.decode(text)  # type: ignore[no-any-return]
    except pyjson5.Json5IllegalCharacter:  # a lone surrogate's escape, which JavaScript takes
        import re

        lone = re.sub(r"\\u(d[89a-f][0-9a-f]{2})", lambda m: chr(int(m[1], 16)), text, flags=re.I)
        return pyjson5.decode(lone)  # type: ignore[no-any-return]


def save_config(config: dict[str, object]) -> None:
    config_file().parent.mkdir(parents=True, exist_ok=True)
    config_file().write_text(json.dumps(config, indent=2))


def config_command(command: str, path: str) -> object:
    config = load_config()
    *parents, last = path.split(".")
    node: object = config
    for key in parents:
        node = node.get(key) if isinstance(node, dict) else None
    if command == "get":
        if not isinstance(node, dict) or last not in node:
            said = json.dumps({"ok": False, "error": f"Config path not found: {path}"})
            raise Refused("", said + "\n")
        return node[last]
    if isinstance(node, dict):
        node.pop(last, None)
    save_config(config)
    return {"ok": True}


def revision() -> str:
    """The Gateway's `config.get` hash: what a `config.patch` must name (here the file's digest)."""
    import hashlib

    path = config_file()
    return hashlib.sha256(path.read_bytes() if path.exists() else b"").hexdigest()


def merge_patch(target: object, patch: object) -> object:
    """RFC 7386, as `config.patch` applies its `raw`: objects merged by key, null takes one out."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def hooks_command(command: str, name: str) -> object:
    if not (state_dir() / "hooks" / name / "HOOK.md").is_file():
        fail(f'Hook "{name}" not found')
    config = load_config()
    hooks = config.setdefault("hooks", {})
    internal = hooks.setdefault("internal", {})  # type: ignore[union-attr]
    entries = internal.setdefault("entries", {})  # type: ignore[union-attr]
    entries[name] = {"enabled": command == "enable"}  # type: ignore[index]
    if command == "enable":
        internal["enabled"] = True  # type: ignore[index]
    save_config(config)
    return {"ok": True, "hook": name, "enabled": command == "enable"}


def respond(argv: list[str]) -> tuple[int, str, str]:
    """One call: its exit code, stdout and stderr."""
    # `FAKE_OPENCLAW_DELAY` seconds stand for Node starting the CLI (benchmarks only); then,
    # calls may come side by side: one at a time here, as the Gateway serializes its store.
    time.sleep(float(os.environ.get("FAKE_OPENCLAW_DELAY") or 0))
    with (state_file().parent / "openclaw.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # each open its own lock: threads exclude each other too
        try:
            return 0, serve(argv), ""
        except Refused as refused:
            return 1, refused.stdout, refused.stderr


def main(argv: list[str]) -> None:
    code, out, err = respond(argv)
    sys.stdout.write(out)
    sys.stderr.write(err)
    sys.exit(code)


def declare(jobs: list[dict[str, object]], spec: dict[str, object]) -> dict[str, object]:
    """`cron.add` with a declaration key: the job converged in place, or made."""
    key = spec.get("declarationKey")
    existing = next((j for j in jobs if key and j.get("declarationKey") == key), None)
    if existing is None:
        import uuid

        job = {"id": str(uuid.uuid4()), "enabled": True, **spec}
        jobs.append(job)
        return {"created": True, "job": job}
    # Only these converge (applyDeclarativeJobSpec of dist/jobs-*.mjs): the name, description
    # and failure alert stay as they were, for `cron.update` to set.
    declared = {k: v for k, v in spec.items() if k in DECLARATIVE}
    updated = any(existing.get(k) != v for k, v in declared.items())
    existing.update(declared)
    return {**existing, "created": False, "updated": updated, "job": existing}


DECLARATIVE = {"displayName", "schedule", "pacing", "trigger", "payload", "delivery", "enabled"}


def update(jobs: list[dict[str, object]], params: dict[str, object]) -> dict[str, object]:
    """`cron.update` `{id, patch}` (CronUpdateParamsSchema, closed): the job patched by id, a
    failure alert merged into the one it has (mergeCronFailureAlert)."""
    patch = params.get("patch")
    if set(params) != {"id", "patch"} or not isinstance(patch, dict) or set(patch) - RPC_ADD:
        fail(f"invalid cron.update params: {sorted(params)}")
    job = next((j for j in jobs if j.get("id") == params["id"]), None)
    if job is None:
        fail(f"invalid cron.update params: unknown cron job id: {params['id']}")
    alert = patch.get("failureAlert")
    if isinstance(alert, dict) and isinstance(job.get("failureAlert"), dict):
        patch = {**patch, "failureAlert": {**job["failureAlert"], **alert}}  # type: ignore[dict-item]
    job.update(patch)
    return job


RPC_ADD = {
    "name", "declarationKey", "displayName", "owner", "agentId", "sessionKey", "description",
    "enabled", "deleteAfterRun", "schedule", "pacing", "trigger", "sessionTarget", "wakeMode",
    "payload", "delivery", "failureAlert",
}  # fmt: skip  # CronAddParamsSchema: a closed object


def serve(argv: list[str]) -> str:
    saved = state_file()
    with (saved.parent / "calls.jsonl").open("a") as calls:
        calls.write(json.dumps(argv) + "\n")
    if os.environ.get("FAKE_OPENCLAW_FAIL"):
        fail(os.environ["FAKE_OPENCLAW_FAIL"])
    state = json.loads(saved.read_text()) if saved.exists() else {"jobs": []}
    jobs: list[dict[str, object]] = state["jobs"]
    group, command, *args = argv
    opts, positional = parse(args)
    one = {k: v[-1] for k, v in opts.items()}
    size = int(os.environ.get("FAKE_OPENCLAW_PAGE") or 200)
    if group == "config" and command == "set":  # `--batch-json`: every path set, one write
        config = load_config()
        for each in json.loads(one["--batch-json"]):
            *parents, last = each["path"].split(".")
            node = config
            for key in parents:
                node = node.setdefault(key, {})
            node[last] = each["value"]
        save_config(config)
        return "Updated config paths.\n"
    if (group, command) == ("gateway", "call") and positional == ["config.get"]:
        return json.dumps({"exists": config_file().exists(), "hash": revision()}) + "\n"
    if (group, command) == ("gateway", "call") and positional == ["config.patch"]:
        params = json.loads(one["--params"])
        if params.get("baseHash") != revision():  # as the Gateway says it, on stdout
            said = {"ok": False, "error": {"message": "config changed since last load"}}
            raise Refused("", json.dumps(said) + "\n")
        save_config(merge_patch(load_config(), json.loads(params["raw"])))
        return json.dumps({"ok": True}) + "\n"
    if group == "config" and command in ("get", "unset"):
        return json.dumps(config_command(command, positional[0]), indent=2) + "\n"
    if group == "hooks" and command in ("enable", "disable"):
        return json.dumps(hooks_command(command, positional[0]), indent=2) + "\n"
    if (group, command) == ("cron", "list"):
        answer: object = page(jobs, 0, size)
    elif (group, command) == ("gateway", "call") and positional == ["cron.list"]:
        params = json.loads(one["--params"])
        answer = page(jobs, params["offset"], min(params["limit"], size))
    elif (group, command) == ("gateway", "call") and positional == ["cron.add"]:
        params = json.loads(one["--params"])
        unknown = sorted(set(params) - RPC_ADD)
        if unknown:
            fail(f"invalid cron.add params: unexpected property '{unknown[0]}'")
        answer = declare(jobs, params)
    elif (group, command) == ("gateway", "call") and positional == ["cron.update"]:
        answer = update(jobs, json.loads(one["--params"]))
    elif (group, command) == ("cron", "add"):
        spec = {
            "name": one["--name"], "declarationKey": one.get("--declaration-key"),
            "displayName": one.get("--display-name"), "agentId": one.get("--agent"),
            "description": one.get("--description"),
            "schedule": {"kind": "cron", "expr": one["--cron"], "staggerMs": 0,
                         **({"tz": one["--tz"]} if "--tz" in one else {})},
            "sessionTarget": one["--session"], "wakeMode": one.get("--wake", "now"),
            "payload": {"kind": "command", "argv": json.loads(one["--command-argv"]),
                        "env": dict(e.split("=", 1) for e in opts.get("--command-env", []))},
            "delivery": {"mode": "announce", "bestEffort": True},
        }  # fmt: skip
        answer = declare(jobs, spec)
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
    saved.write_text(json.dumps(state))
    return json.dumps(answer, indent=2) + "\n"


if __name__ == "__main__":
    main(sys.argv[1:])
