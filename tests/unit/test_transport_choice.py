"""`--transport auto` (the default): session for a stdio server memfuse can start, else mcporter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memfuse.config import load_settings
from memfuse.settings import Settings
from memfuse.store.connect import choose_transport, find_server


def settings_for(tmp_path: Path, entry: dict[str, object] | None, **flags: str) -> Settings:
    config = tmp_path / "mcporter.json"
    if entry is not None:
        config.write_text(json.dumps({"mcpServers": {"agent-memory": entry}, "imports": []}))
        flags.setdefault("mcporter_config", str(config))
    return load_settings({"workspace": str(tmp_path), **flags}, {"HOME": str(tmp_path)})


def transport_of(settings: Settings) -> tuple[str, str]:
    return choose_transport(settings, find_server(settings))


def test_a_stdio_entry_gets_the_session_transport(tmp_path: Path) -> None:
    s = settings_for(tmp_path, {"command": "node", "args": ["/opt/am/server.js"]})
    transport, why = transport_of(s)
    assert transport == "session"
    assert "stdio server (node)" in why


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"url": "https://memory.internal.example/mcp"}, "no stdio server entry"),
        (None, "no stdio server entry"),
    ],
)
def test_anything_else_goes_through_mcporter(
    tmp_path: Path, entry: dict[str, object] | None, reason: str
) -> None:
    transport, why = transport_of(settings_for(tmp_path, entry))
    assert transport == "mcporter"
    assert reason in why


def test_an_explicit_transport_is_kept(tmp_path: Path) -> None:
    s = settings_for(tmp_path, {"command": "node"}, transport="mcporter")
    assert transport_of(s) == ("mcporter", "--transport mcporter")  # type: ignore[arg-type]


def test_without_the_sdk_auto_is_mcporter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n: None if n == "mcp" else real(n))
    s = settings_for(tmp_path, {"command": "node"})
    assert transport_of(s)[0] == "mcporter"  # type: ignore[arg-type]
