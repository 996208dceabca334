"""The agent's host as memfuse meets it outside scheduling (its scheduler is
memfuse.schedule's): where the host keeps the agent's workspace, and where agent-memory beside
it keeps its database and which workspace it watches by default, and the blocks its dreaming
writes into a journal. Facts of OpenClaw 2026.9
(docs/reference.md: OpenClaw, agent-memory 3.x, 4.x, 5.x). Pure: nothing is opened."""

from __future__ import annotations

import re
from pathlib import Path

HOST_FOLDER = ".openclaw"  # the host's folder in the user's home
# The agent's workspace: memfuse's default, and the folder agent-memory 3.x+ ingests by
# itself unless told not to.
WORKSPACE = f"~/{HOST_FOLDER}/workspace"


def workspace_in(home: Path | str) -> Path:
    """The host's workspace under a given home folder."""
    return Path(home) / HOST_FOLDER / "workspace"


def store_db_in(home: Path | str) -> Path:
    """Where the agent-memory entry memfuse writes keeps its database, beside the host's
    workspace."""
    return Path(home) / HOST_FOLDER / "agent-memory.db"


# The host's managed dreaming blocks in the day's journal (memory-core's dreaming in the
# `openclaw` package 2026.9): each between its own markers, at the start of a line.
DREAMING_TAG = "openclaw:dreaming:"
DREAMING_MARKER = re.compile(r"<!-- openclaw:dreaming:(light|rem|deep):(start|end) -->[ \t]*")
