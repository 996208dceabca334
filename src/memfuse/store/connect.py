"""From settings to a gateway: which transport a run uses, and the gateway built for it.

The only place where memfuse's settings meet the gateway package (which knows nothing of them).
"""

from __future__ import annotations

from pathlib import Path

from memfuse.errors import ConfigError
from memfuse.settings import Settings
from memfuse.store.gateway import Gateway, McporterGateway
from memfuse.store.gateway.mcporter import neutral_cwd
from memfuse.store.server_entry import server_spec


def choose_transport(settings: Settings) -> tuple[str, str]:
    """The transport a run uses, and why. `auto` takes the session transport (one server
    process per run, ~100× fewer process starts) whenever it can start the server itself:
    a `[session]` table, or a stdio entry (a `command`) for the server in mcporter's config,
    and the MCP SDK installed. Anything else — an HTTP entry, no config memfuse can read, no
    SDK — goes through mcporter, which knows every kind of entry."""
    if settings.transport != "auto":
        return settings.transport, f"--transport {settings.transport}"
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return "mcporter", "auto: the MCP SDK (the `mcp` package) is not installed"
    try:
        spec = server_spec(settings)
    except ConfigError as exc:
        return "mcporter", f"auto: no stdio server entry memfuse can start ({exc})"
    return "session", f"auto: {settings.server} is a stdio server ({spec.command})"


def open_gateway(settings: Settings) -> Gateway:
    """The transport the settings ask for (see `connect`)."""
    return connect(settings)[0]


def connect(settings: Settings) -> tuple[Gateway, str]:
    """The transport the settings ask for, and why it was chosen. The session transport is
    imported lazily: only it needs the MCP SDK, and other commands should not pay for it."""
    transport, why = choose_transport(settings)
    if transport == "session":
        from memfuse.store.gateway.session import SessionGateway

        state = settings.state_dir
        log = state / "session-server.log" if state.is_dir() else None
        return SessionGateway(server_spec(settings), settings.timeout, log), why
    return McporterGateway(
        settings.mcporter,
        settings.server,
        config=settings.mcporter_config,
        timeout=settings.timeout,
        cwd=neutral_cwd(settings.workspace, Path.cwd(), Path.home()),
    ), why
