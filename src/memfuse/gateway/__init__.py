"""The MCP gateway: how memfuse reaches agent-memory. See `base` for the interface."""

from __future__ import annotations

from pathlib import Path

from memfuse.config import Settings
from memfuse.gateway.base import (
    Answer,
    BadOutput,
    CallFailed,
    CallTimeout,
    Gateway,
    GatewayError,
    ServerError,
    ToolMissing,
)
from memfuse.gateway.guard import Guard
from memfuse.gateway.mcporter import McporterGateway, neutral_cwd

__all__ = [
    "Answer",
    "BadOutput",
    "CallFailed",
    "CallTimeout",
    "Gateway",
    "GatewayError",
    "Guard",
    "McporterGateway",
    "ServerError",
    "ToolMissing",
    "open_gateway",
]


def open_gateway(settings: Settings) -> Gateway:
    """The transport the settings ask for. The session transport is imported lazily: only it
    needs the MCP SDK, and other commands should not pay for loading it."""
    if settings.transport == "session":
        from memfuse.gateway.session import SessionGateway

        return SessionGateway.from_settings(settings)
    return McporterGateway(
        settings.mcporter,
        settings.server,
        config=settings.mcporter_config,
        timeout=settings.timeout,
        cwd=neutral_cwd(settings.workspace, Path.cwd(), Path.home()),
    )
