"""The ten-bullet journal day that the sync, index and recall tests share, and how they sync it
through the real mcporter (or the session transport) and list what the store then holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import StoreServer

DAY = "2026-02-21"
NOW = f"{DAY}T23:00"

JOURNAL = f"""# {DAY}

## 09:30 standup
- Alice wants the billing fix shipped before the Friday freeze
- Reviewed the Q3 roadmap draft with Bob and Carol
- 今天很开心，终于修好了登录问题

## 14:00 memory-sync
- Deployed version 2.4 of the API gateway to staging
- Remember to rotate the staging database credentials monthly
- Wrote the incident summary for the Tuesday outage
- Paired with Dana on the flaky checkout integration test

## 22:00 evening
- I love how calm the on-call week has been so far
- Read two chapters of Designing Data-Intensive Applications
- Booked flights to Lisbon for the March offsite
"""


def sync(
    ws: Path, store: StoreServer, *extra: str, transport: str = "session"
) -> tuple[int, dict[str, Any], str]:
    argv = ["sync", "-w", str(ws), "--date", DAY, "--now", NOW, *store.cli_args(transport)]
    result = CliRunner().invoke(
        app,
        [*argv, "--json", *extra],
    )
    return result.exit_code, json.loads(result.stdout), result.stderr


def journal(ws: Path) -> Path:
    return ws / "memory" / f"{DAY}.md"


def uris(store: StoreServer) -> dict[str, str]:
    found = {}
    for prefix in ("event://journal/", "knowledge://journal/", "emotion://journal/"):
        listing = store.direct("recall_path", {"uri": prefix})
        found.update({m["uri"]: m["content"] for m in listing.get("memories", [])})
    return found
