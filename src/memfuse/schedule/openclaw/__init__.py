"""OpenClaw (the agent runtime) as memfuse's scheduler: its Gateway's own cron jobs.

`jobs` renders and reads the jobs, `gateway` installs them through the `openclaw` CLI, `host`
knows OpenClaw on this machine (its state, configuration and dreaming sweep). Everything
memfuse knows of OpenClaw lives in this package.
"""

from __future__ import annotations

import contextlib
import functools
import json
from concurrent.futures import ThreadPoolExecutor, wait

from memfuse.errors import MemfuseError
from memfuse.schedule.base import InstallOutcome, Machine, MemoryRewriter, Scheduler, system_zone
from memfuse.schedule.openclaw import config, gateway, hook, host, serving
from memfuse.schedule.openclaw.jobs import (
    gateway_call,
    memfuses,
    parse,
    remove_command,
    render,
    stale_ids,
    workspace_of,
)
from memfuse.schedule.runs import Job, Schedule


class OpenClaw(Scheduler):
    """Jobs declared by key in OpenClaw's Gateway through its CLI; the Gateway owns its store."""

    name = "openclaw"
    summary = "OpenClaw's own cron jobs"
    source_help = "an OpenClaw jobs list"
    program = "openclaw"
    shell = True  # an agent turn's `exec:` line
    stdin_ok = True
    own_writers = True  # the Gateway's own list says when dreaming runs
    routes = "install OpenClaw, whose Gateway has a scheduler of its own"

    def render(self, schedule: Schedule, machine: Machine) -> dict[str, str]:
        agent = host.agent_for(workspace_of(schedule), machine.env)
        return render(schedule, tz=self.zone(machine), agent=agent)

    def zone(self, machine: Machine) -> str | None:
        """The installing shell's zone (its TZ), else the system's: the jobs carry it."""
        return host.shell_zone(machine.env) or system_zone()

    def read(self, files: dict[str, str]) -> list[Job]:
        return parse(next(iter(files.values())))

    def install(
        self, schedule: Schedule, files: dict[str, str], machine: Machine
    ) -> InstallOutcome:
        agent = host.agent_for(workspace_of(schedule), machine.env)
        # The hook (its `hooks enable` alone took 10 s on the real CLI) and the jobs do not
        # wait on each other: side by side.
        with ThreadPoolExecutor(max_workers=1) as pool:
            hooked = pool.submit(hook.install, machine)
            try:
                installed, changes = gateway.install(
                    machine.tool, schedule, self.zone(machine), agent
                )
            except BaseException:
                wait([hooked])  # the jobs' failure is the one said
                raise
            hook_changes = hooked.result()
        return InstallOutcome(installed, changes + hook_changes)

    def remove(self, schedule: Schedule, files: dict[str, str], machine: Machine) -> list[str]:
        if not self.available(machine):
            raise MemfuseError("openclaw is not on this PATH: install OpenClaw or pick --format")
        with ThreadPoolExecutor(max_workers=2) as pool:  # the hook and the jobs, side by side
            read = list(gateway_call("config.get", {}))  # beside the list, once for every agent
            start = functools.partial(pool.submit, machine.tool, read, check=False)
            revision = gateway.once("hook", start) if hook.folder(machine).is_dir() else None
            listed = gateway.list_jobs(machine.tool)
            going, _ = stale_ids(listed, schedule, keeping=False)
            others = memfuses(gateway.forget(listed, set(going)))  # another agent's, still there
            unhooked = None if others else pool.submit(hook.remove, machine, revision)
            changes = gateway.remove(machine.tool, schedule, listed)
            hook_changes = unhooked.result() if unhooked is not None else []
        if others:
            changes.append(
                f"kept the OpenClaw hook {hook.NAME}: another memfuse schedule ({len(others)}"
                " jobs) still uses it"
            )
        changes += hook_changes
        for entry in serving.serve_entries(machine.env, workspace_of(schedule)):
            key = entry.split(" (")[0]
            changes.append(
                f"left OpenClaw's MCP server mcp.servers.{entry}, which starts `memfuse serve`:"
                " you added it, and its notes now wait for a sync no schedule runs; remove it"
                f" with `openclaw config unset mcp.servers.{key}`, or keep it and sync by hand"
            )
        return changes

    def where(self, schedule: Schedule, machine: Machine) -> str:
        return "OpenClaw's Gateway cron (`openclaw cron list`: its `memfuse <run> …` jobs)"

    def alerts(self, machine: Machine) -> str:
        route = host.alert_route(machine.env)
        if route is not None and route.startswith("NOT"):
            return f"a failed run is {route}; only `memfuse status` (exit 4) tells"
        if route is not None:
            return f"a failed run: {route}, and `memfuse status` exits 4"
        return (
            "a failed run is NOT announced: OpenClaw has no channel to deliver its failure alert"
            ' to (it fails with "Channel is required"); only `memfuse status` (exit 4) tells.'
            " Add a channel (`openclaw channels add`) or a webhook (`openclaw config set"
            " cron.failureAlert.mode webhook` and `cron.failureAlert.to <url>`)"
        )

    def writers_here(self, machine: Machine) -> list[MemoryRewriter]:
        return host.dreaming(machine.env, machine.which)

    def unread(self, machine: Machine) -> str | None:
        return host.config_problem(machine.env)

    lists_agents = True

    def roster_in(self, machine: Machine) -> str:
        return f"agents.entries or agents.list in {config.config_path(machine.env)}"

    def agents(self, machine: Machine) -> list[tuple[str, str]]:
        return host.agents(machine.env)

    def left_out(self, machine: Machine) -> str | None:
        return host.agents_left_out(machine.env)

    def every_agent(self) -> contextlib.AbstractContextManager[int]:
        """The agents side by side, one job list read for them all (issue 57)."""
        return gateway.shared()

    def crossings(self, machine: Machine) -> list[str]:
        return serving.leaks(machine.env)

    def strays(self, machine: Machine, ids: list[str], *, remove: bool) -> list[str]:
        """memfuse's jobs (by declaration key) of an `agentId` no longer configured."""
        try:
            listed = gateway.list_jobs(machine.tool)
        except MemfuseError as exc:
            return [f"the jobs of agents no longer configured were not looked for: {exc}"]
        keyed = [j for j in memfuses(listed) if isinstance(j.get("agentId"), str)]
        strays = [j for j in keyed if j["agentId"] not in ids]
        past = host.agents_past_cap(machine.env)
        if not remove:
            return [
                f"agent {j['agentId']} is {_why_stray(j['agentId'], past)}: its job"
                f" {j.get('name')} ({j.get('id')}) stays; `memfuse cron --format {self.name}"
                " --remove --all-agents` removes it"
                for j in strays
            ]
        gone = [j for j in strays if isinstance(j.get("id"), str)]
        argvs = [remove_command(str(j["id"])) for j in gone]
        gateway.side_by_side(machine.tool, argvs, "cron rm")
        return [
            f"agent {j['agentId']} is {_why_stray(j['agentId'], past)}: removed its job"
            f" {j.get('name')} ({j.get('id')})"
            for j in gone
        ]

    def writers_in(self, files: dict[str, str]) -> list[MemoryRewriter] | None:
        try:
            listed = json.loads(next(iter(files.values())))
        except ValueError:
            listed = None
        listed = listed.get("jobs") if isinstance(listed, dict) else listed
        return host.busy_times(listed if isinstance(listed, list) else []) or None


SCHEDULER = OpenClaw()


def _why_stray(agent: str, past: set[str]) -> str:
    """Why an agent's job is not one memfuse keeps: gone from the configuration, or past the
    agents memfuse takes (host.AGENTS_MAX)."""
    if agent in past:
        return f"past the first {host.AGENTS_MAX} agents memfuse takes"
    return "no longer configured"
