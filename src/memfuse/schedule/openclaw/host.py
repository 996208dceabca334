"""OpenClaw, the agent runtime, as a host on this machine: where it keeps its state and
configuration, and its own jobs that rewrite MEMORY.md (the dreaming sweep).

memory-core declares the sweep as "Memory Dreaming Promotion" (declaration key
`memory-core:memory-dreaming-promotion`, cron `0 3 * * *` in the Gateway host's zone by default:
`plugins.entries.memory-core.config.dreaming.{frequency,timezone}`), and its deep phase
rewrites MEMORY.md. Names and markers are from the `openclaw` package 2026.9.6
(dist/dreaming-*.mjs) and a job list of a local Gateway.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memfuse.confine import nameable
from memfuse.schedule.base import MemoryRewriter, system_zone
from memfuse.schedule.cronexpr import daily_times
from memfuse.schedule.openclaw import config
from memfuse.untrusted import one_line

DREAMING_JOB = "Memory Dreaming Promotion"
DREAMING_MARKERS = (
    "memory-core:memory-dreaming-promotion",  # its declaration key
    "[managed-by=memory-core.short-term-promotion]",  # its description's tag
    "__openclaw_memory_core_short_term_promotion_dream__",  # its payload's text
)
DREAMING_DEFAULT = "0 3 * * *"  # memory-core's dreaming.frequency when the config is silent
state_dir, config_path, dig = config.state_dir, config.config_path, config.dig


def read_config(env: Mapping[str, str]) -> dict[str, Any] | None:
    """OpenClaw's configuration, read as JSON5 ({} when it cannot be read: its defaults, and
    `config_problem` says why), None when there is no configuration file."""
    return config.reading(env).settings


def config_problem(env: Mapping[str, str]) -> str | None:
    """Why OpenClaw's configuration file cannot be read, as a warning; None when it can."""
    problem = config.reading(env).problem
    if problem is None:
        return None
    return (
        f"OpenClaw's configuration {problem}: memfuse read none of its settings there (its"
        " agents, dreaming's time and zone, the failure-alert route) and takes OpenClaw's"
        " defaults"
    )


def dreaming(env: Mapping[str, str], which: Callable[[str], str | None]) -> list[MemoryRewriter]:
    """When OpenClaw's dreaming sweep rewrites MEMORY.md here, from its config alone (no
    process; docs/operations.md, "Dreaming"), for the schedulers that are not OpenClaw's."""
    settings = read_config(env)
    if settings is None:
        if which("openclaw") is None:
            return []
        settings = {}
    core = dig(settings, "plugins", "entries", "memory-core")
    dream = dig(core, "config", "dreaming")
    if dig(core, "enabled") is False or dig(dream, "enabled") is False:
        return []
    frequency = dig(dream, "frequency")
    fields = (frequency if isinstance(frequency, str) else DREAMING_DEFAULT).split()
    times = daily_times(*fields[-5:]) if len(fields) in (5, 6) else ()
    zone = dig(dream, "timezone")
    return [MemoryRewriter(DREAMING_JOB, times, _gateway_zone(zone))] if times else []


def writes_memory_md(job: dict[str, Any]) -> bool:
    """Whether a job of OpenClaw's list is one that rewrites MEMORY.md."""
    if job.get("name") == DREAMING_JOB:
        return True
    payload = job.get("payload")
    said = [job.get("declarationKey"), job.get("description")]
    if isinstance(payload, dict):
        said += [payload.get("message"), payload.get("text")]
    return any(isinstance(s, str) and m in s for s in said for m in DREAMING_MARKERS)


def busy_times(listed: list[dict[str, Any]]) -> list[MemoryRewriter]:
    """Each enabled job in OpenClaw's list that rewrites MEMORY.md: its daily times and zone
    (a job without `tz` runs in the Gateway host's zone: this machine's)."""
    found = []
    for job in listed:
        if not isinstance(job, dict) or job.get("enabled") is False or not writes_memory_md(job):
            continue
        schedule = job.get("schedule")
        expr = schedule.get("expr") if isinstance(schedule, dict) else None
        zone = schedule.get("tz") if isinstance(schedule, dict) else None
        fields = expr.split() if isinstance(expr, str) else []
        if len(fields) == 6:  # a seconds field first
            fields = fields[1:]
        times = daily_times(*fields) if len(fields) == 5 else ()
        if times:
            found.append(MemoryRewriter(str(job.get("name")), times, _gateway_zone(zone)))
    return found


def _gateway_zone(zone: object) -> str | None:
    """A job's own zone, else the Gateway host's (this machine's, not the installing shell's)."""
    return zone if isinstance(zone, str) and zone.strip() else system_zone()


def shell_zone(env: Mapping[str, str]) -> str | None:
    """The zone the installing shell plans in: its `TZ` when that names a zone this machine
    knows (`:Area/City` too), else None."""
    name = (env.get("TZ") or "").removeprefix(":")
    if not name or name.startswith("/") or ".." in name:
        return None
    try:
        ZoneInfo(name)
    except (ValueError, OSError, ZoneInfoNotFoundError):
        return None
    return name


PATH_MAX = 4096  # bytes of a path the system resolves; a longer one names no folder


def _path(value: object, home: str) -> str | None:
    """A path of the configuration as the real one it names. One longer than PATH_MAX names
    nothing there is, and is not resolved: resolving a path costs time in the square of its
    parts (a 500 KB one in openclaw.json took 9 s, for each of the many times a command asks)."""
    if not isinstance(value, str) or not value.strip():
        return None
    if value == "~" or value.startswith("~/"):
        value = home + value[1:]
    if len(value) > PATH_MAX or not nameable(value):  # a lone surrogate names no file
        return os.path.normpath(value)
    return os.path.realpath(value)


AGENTS_MAX = 64  # agents served from a roster; the rest are said (agents_left_out)


def agents(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """Every configured agent, the first AGENTS_MAX, and its workspace as OpenClaw gives it,
    a real path; one whose workspace memfuse cannot read so is left out (`agents_left_out`)."""
    return _workspaces(env)[0]


def _workspaces(env: Mapping[str, str]) -> tuple[list[tuple[str, str]], list[str]]:
    settings = read_config(env) or {}
    given = dig(settings, "agents", "defaults", "workspace")
    base, why = _workspace(settings, env, "agents.defaults.workspace", given)
    found: list[tuple[str, str]] = []
    said: list[str] = []
    for agent, entry, key in _roster(settings)[:AGENTS_MAX]:
        own, problem = _workspace(settings, env, f"{key}.workspace", entry.get("workspace"))
        if own is None and problem is None:  # OpenClaw's own rule for an entry without one
            own, problem = (
                (os.path.join(base, agent), None) if base else (None, why) if why
                else (os.path.join(os.path.realpath(state_dir(env)), f"workspace-{agent}"), None)
            )  # fmt: skip
        if own is None:
            said.append(f"agent {one_line(agent[:80])}: {problem}: left out")
        else:
            found.append((agent, own))
    return found, said


VAR = re.compile(r"\$\$\{([A-Z_][A-Z0-9_]*)\}|\$\{([A-Z_][A-Z0-9_]*)\}")  # OpenClaw's ${VAR}


def _workspace(
    settings: dict[str, Any], env: Mapping[str, str], key: str, value: object
) -> tuple[str | None, str | None]:
    """`value`, the workspace at `key`, as OpenClaw 2026.9.6 reads it (`${VAR}` from this
    environment, else the file's `env`; `~` its home; relative: its own cwd, unknown here), a
    real path; or why it cannot be; (None, None) when it is not given."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if not isinstance(value, str):
        return None, f"{key} is {json.dumps(value)[:60]}, not a path"
    given = dig(settings, "env")
    named = {k: v for k, v in (given.items() if isinstance(given, dict) else ()) if k != "vars"}
    more = dig(given, "vars")
    named.update(more if isinstance(more, dict) else {})
    named.update({k: v for k, v in env.items() if v.strip()})  # the environment wins
    unset = [m[2] for m in VAR.finditer(value) if m[2] and not isinstance(named.get(m[2]), str)]
    if unset:
        return None, f"{key} names ${{{unset[0]}}}, which is not set here"
    text = VAR.sub(lambda m: f"${{{m[1]}}}" if m[1] else str(named[m[2]]), value).strip()
    home = env.get("OPENCLAW_HOME") or env.get("HOME") or "/nonexistent"
    if not (text.startswith(("/", "~/")) or text == "~"):  # OpenClaw: the Gateway's own cwd
        return None, (
            f"{key} ({one_line(text[:200])}) is relative: OpenClaw resolves it against the"
            " Gateway's working folder, which memfuse cannot know; write it from / or ~"
        )
    return _path(text, home), None


def agents_left_out(env: Mapping[str, str]) -> str | None:
    """The agents past AGENTS_MAX, as a warning (how many, the first few ids); None when
    there are none."""
    roster = _roster(read_config(env) or {})
    extra = [agent for agent, _, _ in roster[AGENTS_MAX:]]
    said = _workspaces(env)[1][:5]
    if extra:
        named = ", ".join(one_line(agent[:80]) for agent in extra[:5])
        said.append(
            f"OpenClaw's configuration lists {len(roster)} agents; memfuse takes the first"
            f" {AGENTS_MAX} and leaves {len(extra)} out, unscheduled and unchecked: {named}"
            f"{', …' if len(extra) > 5 else ''}"
        )
    return "; ".join(said) or None


def agents_past_cap(env: Mapping[str, str]) -> set[str]:
    """The ids of configured agents past AGENTS_MAX: configured, but not memfuse's to serve."""
    return {agent for agent, _, _ in _roster(read_config(env) or {})[AGENTS_MAX:]}


def _roster(settings: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    """(id, entry, the entry's key path) of every configured agent: `agents.entries`, then
    `agents.list[]`, an id once."""
    listed = dig(settings, "agents", "list")
    entries = dig(settings, "agents", "entries")
    pairs: list[tuple[object, object, str]] = [
        (k, e, f"agents.entries.{k}")
        for k, e in (entries.items() if isinstance(entries, dict) else ())
    ]
    pairs += [
        (e.get("id"), e, f"agents.list.{i}")
        for i, e in enumerate(listed if isinstance(listed, list) else [])
        if isinstance(e, dict)
    ]
    found: dict[str, tuple[dict[str, Any], str]] = {}
    for agent, entry, key in pairs:
        if isinstance(agent, str) and agent.strip() and isinstance(entry, dict):
            found.setdefault(agent, (entry, key))
    return [(agent, entry, key) for agent, (entry, key) in found.items()]


def agent_for(workspace: str | None, env: Mapping[str, str]) -> str | None:
    """The id of the configured agent whose workspace this is, or None."""
    if workspace is None:
        return None
    target = os.path.realpath(workspace)
    return next((agent for agent, own in agents(env) if own == target), None)


def alert_route(env: Mapping[str, str]) -> str | None:
    """Where OpenClaw delivers a failure alert (its `cron.failureAlert` webhook or channel, or
    a configured channel), None when it has nowhere to: delivery then fails with
    "Channel is required"; when the configuration cannot be read, that it is unknown."""
    problem = config.reading(env).problem
    if problem is not None:
        return f"where OpenClaw announces them is unknown: its configuration {problem}"
    settings = read_config(env) or {}
    alert = dig(settings, "cron", "failureAlert")
    if dig(alert, "mode") == "webhook" and isinstance(dig(alert, "to"), str):
        host = _private_host(str(dig(alert, "to")), dig(settings, "cron", "webhookSsrfPolicy"))
        if host is None:
            return "OpenClaw posts them to the webhook of its cron.failureAlert"
        return (
            f"NOT delivered: OpenClaw's Gateway blocks its cron.failureAlert webhook to"
            f" {one_line(host[:80])}, a private or internal address, under its"
            " cron.webhookSsrfPolicy; allow it with `openclaw config set"
            f" cron.webhookSsrfPolicy.allowedHostnames '{json.dumps([host[:80]])}' --strict-json`"
        )
    named = dig(alert, "channel")
    channels = dig(settings, "channels")
    configured = [
        name for name, value in (channels.items() if isinstance(channels, dict) else ())
        if isinstance(value, dict) and value.get("enabled") is not False
    ]  # fmt: skip
    if isinstance(named, str) and named.strip():
        return f"OpenClaw announces them on its {one_line(named[:80])} channel"
    if configured:
        names = ", ".join(one_line(str(name)[:80]) for name in sorted(configured)[:5])
        return f"OpenClaw announces them on its channel ({names})"
    return None


def _private_host(url: str, policy: object) -> str | None:
    """The webhook's host when the Gateway's `cron.webhookSsrfPolicy` blocks it before DNS (a
    private, loopback or internal one), else None (memfuse resolves no name)."""
    host = (urlsplit(url.strip()).hostname or "").rstrip(".")
    allowed = dig(policy, "allowedHostnames")
    if dig(policy, "dangerouslyAllowPrivateNetwork") is True or host in (
        allowed if isinstance(allowed, list) else ()
    ):
        return None
    try:
        private = not ipaddress.ip_address(host).is_global
    except ValueError:  # a name: OpenClaw's own before DNS
        private = host in ("localhost", "localhost.localdomain") or host.endswith(
            (".localhost", ".local", ".internal")
        )
    return host if private else None
