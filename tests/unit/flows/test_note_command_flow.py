"""Issue 58: `memfuse note TEXT` writes today's journal from a shell (a hook, a CI job) by the
one writer serve's `note` tool uses: the same section, rules, refusals and answer."""

from __future__ import annotations

import os

from tests.fakes import World
from tests.unit.flows.test_serve_flow import DAY, JOURNAL, NOW, ok, service, synced


def test_a_note_from_the_shell_lands_as_serves_does_and_sync_stores_it(world: World) -> None:
    synced(world)
    journal = world.workspace / "memory" / f"{DAY}.md"
    out = world.json("note", "  Decided: the billing cutover moves to Saturday  ", "--now", NOW)
    assert out.code == 0, out.stderr
    assert out.data == {
        "file": f"memory/{DAY}.md", "line": 8, "section": "22:00", "made": "section",
        "position": f"{DAY}#2200-1", "uri": f"knowledge://journal/{DAY}#2200-1",
        "type": "knowledge", "text": "Decided: the billing cutover moves to Saturday",
    }  # fmt: skip
    assert journal.read_text().endswith(
        "\n## 22:00\n- Decided: the billing cutover moves to Saturday\n"
    )
    # serve's tool, next, is the same writer: the next bullet of the same section
    data = ok(service(world).call("note", {"text": "Then the agent's own note"}))["data"]
    assert data["position"] == f"{DAY}#2200-2" and data["line"] == 9
    text = world.run("note", "And one more from the hook", "--now", NOW)
    assert text.code == 0, text.stderr
    assert text.stdout.splitlines() == [
        f"noted at memory/{DAY}.md:10, under 22:00",
        f"sync will store it as event://journal/{DAY}#2200-3",
    ]
    synced_out = world.json("sync", "--now", NOW)
    assert synced_out.code == 0 and synced_out.data["counts"]["added"] == 3


def test_a_refused_text_exits_non_zero_says_why_and_writes_nothing(world: World) -> None:
    world.journal(DAY, JOURNAL)
    journal = world.workspace / "memory" / f"{DAY}.md"
    before = journal.read_bytes()
    for text, why in (
        ("## Not a heading", "heading"),
        ("two\nlines", "line break"),
        ("   ", "some words"),
        ("x" * 5000, "characters"),
    ):
        out = world.run("note", text, "--now", NOW)
        assert out.code == 2, (text, out.stderr)
        assert "Invalid value for TEXT" in out.stderr and why in out.stderr
        assert journal.read_bytes() == before


def test_a_refused_journal_exits_non_zero_with_the_reason_in_json(world: World) -> None:
    world.journal("2026-01-01", "- New Year's day\n")
    today = world.workspace / "memory" / f"{DAY}.md"
    today.symlink_to("2026-01-01.md")
    out = world.json("note", "Into another day?", "--now", NOW)
    assert out.code == 1
    assert out.envelope["status"] == "failed"
    why = f"{today} is a symbolic link, not a regular file; nothing written"
    assert out.envelope["data"]["error"] == why
    assert (world.workspace / "memory" / "2026-01-01.md").read_text() == "- New Year's day\n"
    assert os.readlink(today) == "2026-01-01.md"
