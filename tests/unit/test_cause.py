"""Another program's failure is told by the line that names its cause, secrets masked."""

from __future__ import annotations

from memfuse.report import cause

# What `openclaw cron list --json` 2026.9.6 printed on stderr with no Gateway (a real run).
NOT_REACHABLE = """Gateway not reachable at ws://127.0.0.1:18998 (ECONNREFUSED).
Start it with `openclaw gateway run` or check `openclaw gateway status`.
Gateway target: ws://127.0.0.1:18998
Source: local loopback
Config: /home/u/.openclaw/openclaw.json
Bind: loopback
"""
NO_CREDENTIALS = """gateway cron.list requires credentials before opening a websocket
Fix: configure gateway.auth token/password, pair this device, or pass --token/--password.
Config: /home/u/.openclaw/openclaw.json
"""


def test_the_cause_and_its_hint_not_the_last_line() -> None:
    assert cause(NOT_REACHABLE) == (
        "Gateway not reachable at ws://127.0.0.1:18998 (ECONNREFUSED). — Start it with"
        " `openclaw gateway run` or check `openclaw gateway status`."
    )
    assert cause(NO_CREDENTIALS).startswith("gateway cron.list requires credentials")
    assert "Fix: configure gateway.auth" in cause(NO_CREDENTIALS)


def test_a_node_stack_is_told_by_its_cannot_find_module_line() -> None:
    said = (
        "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\n"
        "Error: Cannot find module '/x/dist/mcp/server.js'\n    at Module._resolveFilename\n"
    )
    assert cause(said) == "Error: Cannot find module '/x/dist/mcp/server.js'"


def test_secrets_colour_and_length_are_dropped() -> None:
    said = "\x1b[31mfailed: token=abc123 at ws://me:pw@host/ with Bearer xyz.long\x1b[39m"
    told = cause(said)
    assert "abc123" not in told and "pw@" not in told and "xyz.long" not in told
    assert "\x1b" not in told
    assert len(cause("error " + "x" * 5000)) <= 300
    assert cause("\n \n") == "no output"
