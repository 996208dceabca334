"""How to start a stdio MCP server: what the session transport is given."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class ServerSpec:
    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str | None
