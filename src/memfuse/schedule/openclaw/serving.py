"""`memfuse serve` in a Gateway of several agents: which agent can call whose memory.

`mcp.servers` are Gateway-wide, so every agent but the one a `memfuse serve` entry serves must
deny it (docs/serve.md, "Several agents on one Gateway"). Reads, writes nothing;
tool profiles are not read."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from memfuse.host import workspace_in
from memfuse.schedule.openclaw import host
from memfuse.untrusted import one_line

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_ANY_MCP = {"bundle-mcp", "group:plugins", "*"}
TOOLS = ("recall", "where", "status", "note")  # memfuse serve's (memfuse.commands.serve)


def prefix(key: str) -> str:
    """The provider-safe prefix OpenClaw gives a server's tools (`<prefix>__<tool>`)."""
    safe = _UNSAFE.sub("-", key)
    return safe if safe[:1].isalpha() else f"mcp-{safe}"


def serve_servers(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """(key, the workspace it serves) of each `mcp.servers` entry that starts `memfuse serve`:
    its last `-w`/`--workspace` in any form memfuse reads (`-w /w`, `-w/w`, `--workspace=/w`),
    else its env's MEMFUSE_WORKSPACE, else memfuse's default workspace."""
    home = env.get("HOME") or "/nonexistent"
    servers = host.dig(host.read_config(env) or {}, "mcp", "servers")
    found = []
    for key, entry in servers.items() if isinstance(servers, dict) else ():
        command, args = host.dig(entry, "command"), host.dig(entry, "args")
        words = [
            w for w in [command, *(args if isinstance(args, list) else [])] if isinstance(w, str)
        ]
        if not (any(os.path.basename(w) == "memfuse" for w in words[:3]) and "serve" in words):
            continue
        named = host.dig(entry, "env", "MEMFUSE_WORKSPACE")
        for i, word in enumerate(words):
            if word in ("-w", "--workspace") and i + 1 < len(words):
                named = words[i + 1]
            elif word.startswith(("--workspace=", "-w")) and word not in ("-w", "--workspace"):
                named = word.split("=", 1)[1] if word.startswith("--") else word[2:]
        served = host._path(named if isinstance(named, str) else str(workspace_in(home)), home)
        if served is not None and len(served) <= host.PATH_MAX:  # a longer one names no folder
            found.append((str(key)[:80], served))
    return found[:64]


def serve_entries(env: Mapping[str, str], workspace: str | None) -> list[str]:
    """Each `memfuse serve` entry of `mcp.servers`: its key, and whether it serves `workspace`."""
    target = os.path.realpath(workspace) if workspace else None
    return [
        f"{one_line(key)}{' (this workspace)' if served == target else ''}"
        for key, served in serve_servers(env)
    ][:20]


def leaks(env: Mapping[str, str]) -> list[str]:
    """Each configured agent that can call a `memfuse serve` of another agent's workspace."""
    settings = host.read_config(env) or {}
    servers = serve_servers(env)
    said = []
    for agent, workspace in host.agents(env):
        policy = _policy(settings, agent)
        for key, served in servers:
            tools = [] if served == workspace else _reaches(policy, prefix(key))
            if not tools:
                continue
            agent_, key_ = one_line(agent), one_line(key)
            only = f" ({', '.join(tools)} of its tools)" if len(tools) < len(TOOLS) else ""
            said.append(
                f"agent {agent_} can call mcp.servers.{key_}{only}, the memory of"
                f" {one_line(served)} (not its own {one_line(workspace)}):"
                f' add "{prefix(key)}__*" to'
                f" agents.entries.{agent_}.tools.deny"
            )
    return said


def _policy(settings: object, agent: str) -> tuple[list[str], list[str] | None]:
    """(deny globs, allow globs or None) for an agent: the global ones and its own (its entry
    in `agents.entries`, or in the older `agents.list`)."""
    own = host.dig(settings, "agents", "entries", agent, "tools")
    listed = host.dig(settings, "agents", "list")
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict) and entry.get("id") == agent and own is None:
            own = entry.get("tools")
    everyone = host.dig(settings, "tools")
    deny = _strings(host.dig(everyone, "deny")) + _strings(host.dig(own, "deny"))
    allow_own, allow_all = host.dig(own, "allow"), host.dig(everyone, "allow")
    allow = allow_own if isinstance(allow_own, list) else allow_all
    return deny, (_strings(allow) if isinstance(allow, list) else None)


def _reaches(policy: tuple[list[str], list[str] | None], server: str) -> list[str]:
    """The tools of this server the policy lets the agent call (every tool reads or writes
    the memory: `where` and `status` tell a bullet as `recall` does)."""
    deny, allow = policy

    def named(globs: list[str], tool: str) -> bool:
        return any(g.lower() in _ANY_MCP or _glob(g, f"{server}__{tool}") for g in globs)

    open_ = [tool for tool in TOOLS if not named(deny, tool)]
    return [tool for tool in open_ if allow is None or named(allow, tool)]


def _glob(pattern: str, name: str) -> bool:
    """OpenClaw's tool glob (dist/glob-pattern-*.mjs, 2026.9.6): `*` alone is a wildcard;
    `?` and `[…]` are literal, as fnmatch's are not — a deny of `memfuse-wor?__*` that fnmatch
    took as closing the server closes nothing in OpenClaw."""
    said = re.escape(pattern.lower()).replace(r"\*", ".*")
    return re.fullmatch(said, name.lower(), re.DOTALL) is not None


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)][:200] if isinstance(value, list) else []
