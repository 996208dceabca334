"""Issue 55: a store serves one workspace, on the reference server. Two workspaces on one
entry wrote the same journal URIs (a day and a time, no workspace): the second's sync
overwrote the first's bullets. Now the second is refused before its first store call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import StoreServer
from tests.integration.ten_bullets import DAY, journal, sync, uris

pytestmark = pytest.mark.integration

HOME = "## 09:30\n- The garden needs watering on Fridays\n"
WORK = "## 09:30\n- The payments migration ships in March\n"


def test_a_second_workspace_on_one_store_never_overwrites_the_first(
    store: StoreServer, workspace: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / "memory").mkdir(parents=True)
    journal(workspace).write_text(HOME)
    journal(work).write_text(WORK)
    assert sync(workspace, store)[0] == 0
    home_uri = f"event://journal/{DAY}#0930-1"
    assert uris(store) == {home_uri: "The garden needs watering on Fridays"}

    code, out, _ = sync(work, store)
    assert code == 2
    assert f"holds the memories of workspace {workspace.resolve()}" in out["data"]["error"]
    assert uris(store) == {home_uri: "The garden needs watering on Fridays"}  # home's, kept
    assert (store.root / "agent-memory.db.memfuse-workspace").read_text() == str(
        workspace.resolve()
    )
