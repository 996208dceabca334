"""Many concurrent remembers against the fake store: every bullet lands, none is refused."""

from __future__ import annotations

from tests.fakes import World


def test_a_sync_of_many_bullets_with_many_jobs_lands_every_one(world: World) -> None:
    for d in range(1, 21):  # 200 bullets sharing no word, so the store folds none of them
        lines = [f"- {' '.join(f'w{d}x{i}y{k}' for k in range(4))}\n" for i in range(10)]
        world.journal(f"2026-11-{d:02d}", "".join(lines))
    run = world.json("sync", "--jobs", "8", "--now", "2026-11-30T22:00")
    assert run.code == 0, run.stderr
    assert run.data["counts"]["added"] == 200 and run.data["counts"]["failed"] == 0
    assert len(world.gateway.journal_uris()) == 200
