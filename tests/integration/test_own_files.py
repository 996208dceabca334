"""Issue 54, with real files and links and the installed `memfuse`: the data memfuse's own
writes lost on main 084d206 — MEMORY.md's facts under a RECENT.md link, a journal under a
RECENT.kept.md link, a person's lines in a RECENT.md too big to read, a note appended to
another day through a link in place of today's journal — stays, byte for byte."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import StoreServer
from tests.integration import ten_bullets
from tests.integration.test_serve import MEMFUSE, ask
from tests.integration.test_untrusted_workspace import DAY, run

pytestmark = pytest.mark.integration

FACTS = "# Memory\n" + "".join(f"- Fact {n}: the person's own, kept by hand\n" for n in range(3000))
NEW_YEAR = "## 09:00\n" + "".join(f"- New Year's bullet {n}\n" for n in range(433))


@pytest.fixture
def lived_in(store: StoreServer, workspace: Path) -> Path:
    (workspace / "MEMORY.md").write_text(FACTS)
    (workspace / "memory" / f"{DAY}.md").write_text("- Shipped the billing fix today\n")
    (workspace / "memory" / "2026-01-01.md").write_text(NEW_YEAR)
    assert run("sync", "--all", "-w", str(workspace), *store.cli_args())[0] == 0
    return workspace


def test_a_recent_md_linked_to_memory_md_costs_no_fact(store: StoreServer, lived_in: Path) -> None:
    (lived_in / "RECENT.md").symlink_to("MEMORY.md")
    code, envelope, stderr = run("surface", "-w", str(lived_in), *store.cli_args())
    assert code == 1
    assert f"{lived_in / 'RECENT.md'} is a symbolic link" in envelope["data"]["error"], stderr
    assert (lived_in / "MEMORY.md").read_text() == FACTS
    assert not (lived_in / "RECENT.kept.md").exists()


def test_a_recent_kept_md_linked_to_a_journal_costs_no_bullet(
    store: StoreServer, lived_in: Path
) -> None:
    assert run("surface", "-w", str(lived_in), *store.cli_args())[0] == 0
    recent = lived_in / "RECENT.md"
    recent.write_text(recent.read_text() + "- The person's own line, added by hand\n")
    (lived_in / "RECENT.kept.md").symlink_to("memory/2026-01-01.md")
    code, envelope, stderr = run("surface", "-w", str(lived_in), *store.cli_args())
    assert code == 0, stderr
    assert (lived_in / "memory" / "2026-01-01.md").read_text() == NEW_YEAR
    assert any("RECENT.kept.md is a symbolic link" in w for w in envelope["warnings"])
    assert "added by hand" in Path(envelope["data"]["user_lines"]["copy"]).read_text()


def test_a_person_s_lines_in_a_recent_md_too_big_to_read_stay(
    store: StoreServer, lived_in: Path
) -> None:
    (lived_in / ".memfuse").mkdir()
    (lived_in / ".memfuse" / "config.toml").write_text("max_file_mib = 1\n")
    mine = "".join(
        f"- The person's line {n}, written over a year of mornings\n" for n in range(24_000)
    )
    (lived_in / "RECENT.md").write_text(mine)
    code, envelope, stderr = run("surface", "-w", str(lived_in), *store.cli_args())
    assert code == 1
    assert "above the 1 MiB read limit" in envelope["data"]["error"], stderr
    assert (lived_in / "RECENT.md").read_text() == mine


@pytest.mark.parametrize("target", ["2026-01-01.md", "../MEMORY.md"])
def test_a_note_through_a_link_in_place_of_today_s_journal_is_refused(
    store: StoreServer, lived_in: Path, target: str
) -> None:
    day = ten_bullets.DAY  # serve's day in ask()
    today = lived_in / "memory" / f"{day}.md"
    today.symlink_to(target)
    done = subprocess.run(
        [MEMFUSE, "note", "-w", str(lived_in), "--now", ten_bullets.NOW, "Decided: ship Friday"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert f"memory/{day}.md is a symbolic link" in done.stderr
    (answer,) = ask(lived_in, store, [("note", {"text": "Decided: ship on Friday"})])[1:]
    assert answer.is_error and "is a symbolic link" in answer.content[0].text
    assert (lived_in / "MEMORY.md").read_text() == FACTS
    assert (lived_in / "memory" / "2026-01-01.md").read_text() == NEW_YEAR
    assert os.readlink(today) == target
