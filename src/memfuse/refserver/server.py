"""The MCP face of the reference server: JSON-RPC 2.0 over stdio, one message per line.

A minimal, dependency-free implementation of the parts of MCP a tool server needs
(initialize, tools/list, tools/call, ping). It starts in a few tens of milliseconds, which keeps
one-process-per-call mcporter runs and the test suite fast. See docs/decisions.md.

Environment: AGENT_MEMORY_DB (SQLite path, default ./agent-memory.db), AGENT_MEMORY_AGENT_ID
(default `default`). Test knobs of this stand-in only: AGENT_MEMORY_NOW (ISO date-time that
replaces the clock), AGENT_MEMORY_GATE=off (disable the write gate) and AGENT_MEMORY_COMPAT=2|3|4|5
(answer as that generation of agent-memory does: tool list, answer shapes, gate, merge, reflect
format, capacity eviction, the `[auto-ingest]` stdout line; see docs/decisions.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import IO, Any

from memfuse import __version__
from memfuse.host import WORKSPACE
from memfuse.refserver.store import Store, default_caps, parse_iso
from memfuse.refserver.tools import call_tool, tool_list

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_INFO = {
    "name": "agent-memory",
    "version": "2.2.0",
    "title": f"memfuse refserver {__version__}",
}


def make_clock(env: Mapping[str, str]) -> Callable[[], datetime]:
    fixed = env.get("AGENT_MEMORY_NOW")
    if not fixed:
        return lambda: datetime.now(UTC)
    moment = parse_iso(fixed)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return lambda: moment


def handle(store: Store, message: dict[str, Any]) -> dict[str, Any] | None:
    """One JSON-RPC message in, its response out (None for notifications)."""
    method = message.get("method")
    msg_id = message.get("id")
    if msg_id is None:
        return None  # notifications (initialized, cancelled, …) need no answer
    params = message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": tool_list(store.generation)}
    elif method == "tools/call":
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            return _error(msg_id, -32602, "arguments must be an object")
        result = call_tool(store, str(params.get("name")), arguments)
    else:
        return _error(msg_id, -32601, f"Method not found: {method}")
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def serve(store: Store, stdin: IO[bytes], stdout: IO[bytes], noise: str | None = None) -> None:
    """Answer JSON-RPC lines until stdin closes. `noise`: a line printed on stdout, outside
    JSON-RPC, right after the first answer (3.x–5.x's auto-ingest does that)."""
    for raw in stdin:
        line = raw.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            reply: dict[str, Any] | None = _error(None, -32700, "Parse error")
        else:
            reply = handle(store, message) if isinstance(message, dict) else None
        if reply is not None:
            stdout.write(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
            if noise is not None:
                stdout.write(noise.encode("utf-8") + b"\n")
                noise = None
            stdout.flush()


def store_from_env(env: Mapping[str, str]) -> Store:
    """The store this server answers from, configured by its AGENT_MEMORY_* variables."""
    generation = compat(env)
    return Store(
        env.get("AGENT_MEMORY_DB", "./agent-memory.db"),
        env.get("AGENT_MEMORY_AGENT_ID", "default"),
        make_clock(env),
        gate=env.get("AGENT_MEMORY_GATE", "on").lower() not in ("off", "0", "false"),
        generation=generation,
        caps=default_caps(generation, dict(env)),
    )


def main() -> None:
    env = os.environ
    store = store_from_env(env)
    noise = None
    if store.generation >= 3 and env.get("AGENT_MEMORY_AUTO_INGEST", "1") not in ("0", "false"):
        watched = env.get("AGENT_MEMORY_WORKSPACE", WORKSPACE)
        noise = f"[auto-ingest] watching {watched} (MEMORY.md, memory/*.md)"
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve(store, sys.stdin.buffer, sys.stdout.buffer, noise)


def compat(env: Mapping[str, str]) -> int:
    """AGENT_MEMORY_COMPAT=2|3|4|5: the generation whose answers this stand-in gives."""
    value = env.get("AGENT_MEMORY_COMPAT", "2").strip()
    if value not in ("2", "3", "4", "5"):
        raise SystemExit(f"AGENT_MEMORY_COMPAT must be 2, 3, 4 or 5, got {value!r}")
    return int(value)
