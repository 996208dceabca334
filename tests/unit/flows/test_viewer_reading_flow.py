"""What a viewer shows as a list item reaches the store, once (issue 39, families 2-6), and a
comment flood is read whole. In-process, against the scripted store."""

from __future__ import annotations

from tests.conftest import THOROUGH
from tests.fakes import World

DAY = "2026-11-16"  # a Monday
LATER = "2026-11-30"  # two weeks on: DAY is old enough to archive
CHECKLIST = "Cutover checklist\n## Before the cutover\n- freeze writes\n- snapshot the database"
JOURNAL = (
    "## 14:00\n- <!-- src:chat --> The deploy key rotates on Monday\n"
    "> - Migrate billing before Friday\n\nProse,\n" + " " * 130 + "\n\n"
    "- Cutover checklist\n  ## Before the cutover\n  - freeze writes\n  - snapshot the database\n"
    "## Light Sleep\n<!-- openclaw:dreaming:light:start -->\n- Candidate: restated\n"
    "<!-- openclaw:dreaming:light:end -->\n- Appended after the dreaming block\n"
    "## Deep sleep\n- Slept eight hours\n"
)
SEEN = {
    "The deploy key rotates on Monday", "Migrate billing before Friday", CHECKLIST,
    "Appended after the dreaming block", "Slept eight hours",
}  # fmt: skip


def test_every_item_a_viewer_shows_is_stored_once_even_after_its_day_is_rolled_up(
    world: World,
) -> None:
    world.journal(DAY, JOURNAL)
    synced = world.json("sync", "--now", f"{DAY}T22:00")
    assert synced.code == 0, synced.stderr
    assert set(world.gateway.journal_uris().values()) == SEEN
    rolled = world.json("tidy", "--archive", "--now", f"{LATER}T03:00")
    assert [r["date"] for r in rolled.data["archive"]["archived"]] == [DAY], rolled.stderr
    again = world.json("sync", "--all", "--now", f"{LATER}T04:00")
    assert again.code == 0, again.stderr
    assert again.data["counts"]["added"] == 0, again.data["counts"]
    held = world.gateway.journal_uris()
    assert sorted(held.values()) == sorted(SEEN)  # the checklist is not stored twice


def test_a_comment_flood_in_one_bullet_is_read_and_where_finds_its_neighbour(
    world: World,
) -> None:
    # 2.7 MiB in CI; 1.2 MiB in the developer's loop, still past the 1 MiB the tail reads alone
    flood = "<!---->" * (400_000 if THOROUGH else 180_000)
    world.journal(
        DAY, f"## 09:00\n- The deploy key {flood} rotates on Monday\n- Maria owns billing\n"
    )
    synced = world.json("sync", "--now", f"{DAY}T22:00")
    assert synced.code == 0, synced.stderr
    assert sorted(world.gateway.journal_uris().values()) == [
        "Maria owns billing", "The deploy key  rotates on Monday",
    ]  # fmt: skip
    found = world.json("where", "Maria owns billing", "--now", f"{DAY}T22:00")
    assert found.data["bullets"][0]["location"] == f"memory/{DAY}.md:3"
