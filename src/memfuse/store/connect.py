"""From settings to a gateway: which transport a run uses, and the gateway built for it.

The only place where memfuse's settings meet the gateway package (which knows nothing of them).
The server's entry (mcporter's config or memfuse's `[session]` table) is read once a run, by
`find_server`, and handed to whatever needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from memfuse.errors import ConfigError
from memfuse.settings import Settings
from memfuse.store.gateway import Gateway, McporterGateway, ServerSpec
from memfuse.store.gateway.mcporter import neutral_cwd
from memfuse.store.server_entry import server_spec

Server = ServerSpec | ConfigError  # the server's entry, or why it cannot be read


def find_server(settings: Settings) -> Server:
    """The server's entry, read once for the run: its spec, or the reason there is none."""
    try:
        return server_spec(settings)
    except ConfigError as exc:
        return exc


def choose_transport(settings: Settings, server: Server) -> tuple[str, str]:
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
    if isinstance(server, ConfigError):
        return "mcporter", f"auto: no stdio server entry memfuse can start ({server})"
    return "session", f"auto: {settings.server} is a stdio server ({server.command})"


def connect(
    settings: Settings, server: Server, server_log: Callable[[], TextIO] | None = None
) -> tuple[Gateway, str]:
    """The transport the settings ask for, and why it was chosen. The session transport is
    imported lazily: only it needs the MCP SDK, and other commands should not pay for it.
    `server_log` opens where the stderr of a server the session transport starts is kept."""
    transport, why = choose_transport(settings, server)
    if transport == "session":
        from memfuse.store.gateway.session import SessionGateway

        if isinstance(server, ConfigError):
            raise server
        return SessionGateway(server, settings.timeout, server_log, name=settings.server), why
    return McporterGateway(
        settings.mcporter,
        settings.server,
        config=settings.mcporter_config,
        timeout=settings.timeout,
        cwd=neutral_cwd(settings.workspace, Path.cwd(), Path.home()),
    ), why
