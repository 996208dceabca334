"""OpenClaw's own cron (the Gateway scheduler): a job per run, a `command` payload (an argv
run on the Gateway host, no model in between), declared by its declaration key (converged in
place, same id) as the `cron.add` parameters of OpenClaw's docs/automation/cron-jobs.md and
src/cron/types.ts have them (openclaw/openclaw at commit 001978f7002940af65e02388381f5feaec92d2f7);
jobs of this label the schedule no longer has are removed by id (`stale_ids`). An agent-turn
job (`exec: <sh command>`) is read back, never written.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from typing import Any

from memfuse.schedule.cronexpr import cron_times, daily_times
from memfuse.schedule.runs import Job, ParseError, Run, Schedule, merge_adjacent
from memfuse.schedule.shwords import split_command

EXEC_PREFIX = "exec: "
TIMEOUT_SECONDS = 900  # sync and surface may wait 300 s for the workspace lock, then run
ALERT_AFTER = 1  # a memfuse run exits non-zero when it needs a person: say so the first time
DECLARATION_PREFIX = "memfuse:"  # none of OpenClaw's reserved ones (heartbeat:, …)
UPDATED_APART = ("name", "description", "failureAlert")  # what cron.add by key keeps as it was


def declaration_key(name: str) -> str:
    """The job's identity for `cron add --declaration-key`: its name, in memfuse's namespace."""
    return DECLARATION_PREFIX + name


def job_names(schedule: Schedule) -> list[str]:
    """The hash labels keying this schedule's jobs: what an installer may remove, nothing else."""
    return [name for run in schedule.runs for name, _ in _exprs(schedule, run)]


def render(
    schedule: Schedule, *, tz: str | None = None, agent: str | None = None
) -> dict[str, str]:
    """{file name: a JSON list of `cron.add` parameters}, one entry per job."""
    text = json.dumps(jobs(schedule, tz=tz, agent=agent), indent=2, ensure_ascii=False)
    return {f"{schedule.label}.openclaw-cron.json": text + "\n"}


def jobs(
    schedule: Schedule, *, tz: str | None = None, agent: str | None = None
) -> list[dict[str, Any]]:
    """The `cron.add` parameters of every job: one per run, or per distinct minute of a run
    (a job has one cron expression). `tz` is the zone the times were planned in (the
    Gateway's own when None); `agent` the configured agent whose workspace this is."""
    found = []
    for run in schedule.runs:
        for i, (label, expr) in enumerate(_exprs(schedule, run)):
            name = title(schedule, run, i, agent)
            found.append(
                {
                    "name": name,
                    "displayName": name,
                    "declarationKey": declaration_key(label),
                    "description": _zoned(run.comment, tz),
                    **({"agentId": agent} if agent else {}),
                    "enabled": True,
                    "schedule": {"kind": "cron", "expr": expr, **({"tz": tz} if tz else {})},
                    "sessionTarget": "isolated",
                    "wakeMode": "next-heartbeat",
                    "payload": {
                        "kind": "command",
                        "argv": list(run.argv),
                        "env": dict(schedule.env),
                        "timeoutSeconds": TIMEOUT_SECONDS,
                    },
                    "delivery": {"mode": "announce", "bestEffort": True},
                    # bestEffort silences OpenClaw's default alert; an explicit one is kept.
                    "failureAlert": {"after": ALERT_AFTER},
                }
            )
    return found


def declare_params(
    schedule: Schedule, *, tz: str | None = None, agent: str | None = None
) -> list[dict[str, Any]]:
    """The Gateway's `cron.add` parameters of every command job, as `cron add
    --declaration-key … --exact` sends them (dist/cron-cli-*.mjs of 2026.9.6 builds the same
    object) plus the failure alert, which the RPC takes (`CronAddParamsSchema`) but the CLI
    has no flag for: one call declares a job whole. `enabled` is left out, as the CLI leaves
    it out for a declared job, so a job the user disabled stays disabled."""
    found = []
    for job in jobs(schedule, tz=tz, agent=agent):
        params = {key: value for key, value in job.items() if key != "enabled"}
        params["schedule"] = {**job["schedule"], "staggerMs": 0}
        found.append(params)
    return found


def gateway_call(method: str, params: dict[str, Any]) -> tuple[str, ...]:
    """`openclaw gateway call METHOD` with its parameters, glued to their flag."""
    text = json.dumps(params, ensure_ascii=False, separators=(",", ":"))
    return ("openclaw", "gateway", "call", method, "--json", f"--params={text}")


def in_place(listed: dict[str, Any] | None, params: dict[str, Any]) -> bool:
    """Whether a listed job already is what `params` would declare (every field `cron.add`
    converges): then no `cron.add` is made for it. Anything missing or different in the
    list's answer re-declares it — never a wrong "unchanged"."""
    if listed is None:
        return False
    return all(_holds(listed.get(k), v) for k, v in params.items() if k not in UPDATED_APART)


def update_params(listed: dict[str, Any] | None, params: dict[str, Any]) -> dict[str, Any] | None:
    """The `cron.update` parameters (by id) that set what `cron.add` leaves as it was on a job
    it converges by key — applyDeclarativeJobSpec of dist/jobs-*.mjs sets its schedule,
    payload, delivery and displayName only — such as a name older memfuse gave it by hash."""
    if listed is None or not isinstance(listed.get("id"), str):
        return None
    patch = {k: params[k] for k in UPDATED_APART if not _holds(listed.get(k), params[k])}
    return {"id": listed["id"], "patch": patch} if patch else None


def _holds(have: object, value: object) -> bool:  # an object: its every key as declared
    if isinstance(value, dict):
        return isinstance(have, dict) and all(_same(have.get(k), v) for k, v in value.items())
    return _same(have, value)


def _same(have: object, value: object) -> bool:
    """Equal, or both empty (a list may leave out an empty `env`); 0 is not empty."""
    empty: tuple[object, ...] = (None, {}, [], "")
    return have == value or (have in empty and value in empty)


def remove_command(job_id: str) -> tuple[str, ...]:
    return ("openclaw", "cron", "rm", "--json", "--", job_id)


def memfuses(listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The jobs of a Gateway's list that memfuse declared (any schedule's)."""
    return [j for j in listed if str(j.get("declarationKey") or "").startswith(DECLARATION_PREFIX)]


def stale_ids(
    listed: list[dict[str, Any]], schedule: Schedule, *, keeping: bool = True
) -> tuple[list[str], list[str]]:
    """The ids of the Gateway's jobs to remove before (re)declaring this schedule: jobs with
    this label's declaration keys that the schedule no longer has (all of them when not
    `keeping`), and jobs with its names but no key (made by an older memfuse). And the names
    of such jobs without a usable id, which are left alone and reported."""
    keys = {declaration_key(name) for name in job_names(schedule)} if keeping else set()
    ours = DECLARATION_PREFIX + schedule.label + "-"
    names = set(job_names(schedule))
    ids: list[str] = []
    unusable: list[str] = []
    for job in listed:
        key = job.get("declarationKey")
        if key in keys:
            continue
        mine = (isinstance(key, str) and key.startswith(ours)) or (
            job.get("name") in names and not (isinstance(key, str) and key)
        )
        if not mine:
            continue
        job_id = job.get("id")
        if isinstance(job_id, str) and job_id.strip():
            ids.append(job_id)
        else:
            unusable.append(str(job.get("name")))
    return ids, unusable


def workspace_of(schedule: Schedule) -> str | None:
    """The workspace the schedule's runs name (`--workspace`)."""
    argv = schedule.runs[0].argv
    found = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--workspace"]
    return found[0] if found else None


def title(schedule: Schedule, run: Run, index: int = 0, agent: str | None = None) -> str:
    """The job's name, all OpenClaw's failure alert says of it (`Automation "memfuse sync for
    agent home" failed 1 times`), and its display name: its run and agent, else `memfuse sync
    (notes)`, the workspace's folder cut to 40 letters, digits or `._-`."""
    folder = posixpath.basename((workspace_of(schedule) or "").rstrip("/"))
    shown = "".join(c if c.isalnum() or c in "._-" else "-" for c in folder[:40])
    whose = f" for agent {agent}" if agent else f" ({shown or schedule.label})"
    return f"memfuse {run.name}{f' {index + 1}' if index else ''}{whose}"


def _zoned(comment: str, tz: str | None) -> str:
    """A run's comment with its times' zone: `14:00 and 22:00 Asia/Shanghai: …`."""
    times, colon, rest = comment.partition(": ")
    return f"{times} {tz}{colon}{rest}" if tz and colon else comment


def _exprs(schedule: Schedule, run: Run) -> list[tuple[str, str]]:
    exprs = cron_times(run.times)
    base = schedule.unit_name(run)
    return [(base if i == 0 else f"{base}-{i + 1}", expr) for i, expr in enumerate(exprs)]


# --- reading jobs back ---------------------------------------------------------------------


def parse(text: str) -> list[Job]:
    """The command jobs in OpenClaw cron JSON: `render`'s list, `openclaw cron list --json`
    or the Gateway's jobs.json (`{"jobs": [...]}`). Jobs with no command (an agent turn
    without an `exec:` line, a system event) are not memfuse's and are left out."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"not JSON: {exc}") from None
    listed = data.get("jobs") if isinstance(data, dict) else data
    if not isinstance(listed, list):
        raise ParseError("expected a list of jobs, or an object with a 'jobs' list")
    found = [job for entry in listed if (job := _job(entry)) is not None]
    return merge_adjacent(found)


def _job(entry: object) -> Job | None:
    if not isinstance(entry, dict):
        raise ParseError(f"a job is an object, not {entry!r}")
    name = str(entry.get("name") or entry.get("id") or "?")
    body = entry.get("payload") or {}
    schedule = entry.get("schedule") or {}
    expr = schedule.get("expr") if schedule.get("kind") == "cron" else None
    when = expr if isinstance(expr, str) else json.dumps(schedule)
    fields = when.split()
    times = daily_times(*fields) if expr and len(fields) == 5 else ()
    if body.get("kind") == "agentTurn":
        command = _exec_line(str(body.get("message", "")), name)
        if command is None:
            return None
        argv, env = split_command(command, name)
        return Job(name, argv, tuple(env.items()), times, when, command)
    if body.get("kind") == "command":
        argv, env = _command_payload(body, name)
        return Job(name, argv, tuple(env.items()), times, when, shlex.join(argv))
    return None


def _exec_line(text: str, name: str) -> str | None:
    lines = [line for line in text.split("\n") if line.startswith(EXEC_PREFIX)]
    if len(lines) > 1:
        raise ParseError(f"{name}: more than one '{EXEC_PREFIX}' line")
    return lines[0].removeprefix(EXEC_PREFIX) if lines else None


def _command_payload(body: dict[str, Any], name: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """argv and env of a command payload: `argv` as the CLI stores it, or the `command` and
    `args` of the Gateway's command runner (both shapes exist in OpenClaw's history)."""
    argv = body.get("argv") or [body.get("command"), *(body.get("args") or [])]
    env = body.get("env") or {}
    if not all(isinstance(a, str) for a in argv) or not isinstance(env, dict):
        raise ParseError(f"{name}: a command payload without a list of strings to run")
    if not all(isinstance(v, str) for v in env.values()):
        raise ParseError(f"{name}: a command payload's env is not strings")
    return tuple(argv), env
