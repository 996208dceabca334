"""The MCP gateway: how memfuse reaches agent-memory. See `base` for the interface.

The gateway knows nothing of memfuse's settings: `memfuse.store.connect` builds one from them."""

from __future__ import annotations

from memfuse.store.gateway.base import (
    Answer,
    BadOutput,
    CallFailed,
    CallTimeout,
    Gateway,
    GatewayError,
    ServerError,
    ServerSpec,
    ToolMissing,
)
from memfuse.store.gateway.guard import Guard
from memfuse.store.gateway.mcporter import McporterGateway

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
    "ServerSpec",
    "ToolMissing",
]
