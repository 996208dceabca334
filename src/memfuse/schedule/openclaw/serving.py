"""`memfuse serve` in a Gateway of several agents: which agent can call whose memory.

OpenClaw's MCP servers (`mcp.servers`) are Gateway-wide: every agent's model sees every
server's tools (`<prefix>__<tool>`) unless its tool policy says otherwise. A server that
learns its caller is not offered for a stdio server (OpenClaw 2026.9 scopes a connection per
requester only for OAuth or a plugin's HTTP resolver, keyed by sender, not agent), so each
agent gets a `memfuse serve -w <its workspace>` entry of its own, and every other agent
denies it (`agents.entries.<id>.tools.deny: ["memfuse-work__*"]`, deny wins; or an `allow`
list that does not take it). This module reads what is configured and names each agent that
can still reach another agent's memory; it writes nothing (the entries are the user's). Tool
profiles are not read: an agent whose profile leaves plugins out is named all the same, and
says why in its words (a policy that names nothing about the server).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memfuse.host import workspace_in
from memfuse.schedule.openclaw import host
from memfuse.untrusted import one_line

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_ANY_MCP = {"bundle-mcp", "group:plugins", "*"}


def prefix(key: str) -> str:
    """The provider-safe prefix OpenClaw gives a server's tools (`<prefix>__<tool>`)."""
    safe = _UNSAFE.sub("-", key)
    return safe if safe[:1].isalpha() else f"mcp-{safe}"


def serve_servers(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """(key, the workspace it serves) of each `mcp.servers` entry that starts `memfuse serve`
    (no `-w`: memfuse's default workspace)."""
    home = env.get("HOME") or "/nonexistent"
    found = []
    for key, named in host.serve_commands(env):
        served = host._path(named[0] if named else str(workspace_in(home)), home)
        if served is not None and len(served) <= host.PATH_MAX:  # a longer one names no folder
            found.append((key[:80], served))
    return found[:64]


def leaks(env: Mapping[str, str]) -> list[str]:
    """Each configured agent that can call a `memfuse serve` of another agent's workspace."""
    settings = host.read_config(env) or {}
    servers = serve_servers(env)
    said = []
    for agent, workspace in host.agents(env):
        policy = _policy(settings, agent)
        for key, served in servers:
            if served == workspace or not _reaches(policy, prefix(key)):
                continue
            agent_, key_ = one_line(agent), one_line(key)
            said.append(
                f"agent {agent_} can call mcp.servers.{key_}, the memory of {one_line(served)}"
                f' (not its own {one_line(workspace)}): add "{prefix(key)}__*" to'
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


def _reaches(policy: tuple[list[str], list[str] | None], server: str) -> bool:
    deny, allow = policy
    tools = [f"{server}__recall", f"{server}__note"]
    if all(any(_glob(g, t) for g in deny) for t in tools):
        return False
    if allow is None:
        return True
    return any(g.lower() in _ANY_MCP or _glob(g, t) for g in allow for t in tools)


def _glob(pattern: str, name: str) -> bool:
    """OpenClaw's tool glob (dist/glob-pattern-*.mjs, 2026.9.6): `*` alone is a wildcard;
    `?` and `[…]` are literal, as fnmatch's are not — a deny of `memfuse-wor?__*` that fnmatch
    took as closing the server closes nothing in OpenClaw."""
    said = re.escape(pattern.lower()).replace(r"\*", ".*")
    return re.fullmatch(said, name.lower(), re.DOTALL) is not None


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)][:200] if isinstance(value, list) else []
