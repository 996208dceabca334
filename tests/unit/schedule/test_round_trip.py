"""Every format reads back exactly the argv, environment and times it was rendered from."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memfuse.schedule import Job, Schedule, crontab, launchd, systemd
from memfuse.schedule.openclaw import jobs as openclaw
from tests.unit.schedule.samples import hostile_schedule, memfuse_schedule

READ_BACK: dict[str, Callable[[Schedule], list[Job]]] = {
    "crontab": lambda s: crontab.parse(crontab.render(s)),
    "systemd": lambda s: systemd.parse(systemd.render(s)),
    "launchd": lambda s: launchd.parse(launchd.render(s)),
    "openclaw": lambda s: openclaw.parse(*openclaw.render(s).values()),
}


@pytest.mark.parametrize(
    "schedule", [memfuse_schedule(), hostile_schedule()], ids=["memfuse", "hostile"]
)
@pytest.mark.parametrize("fmt", list(READ_BACK))
def test_each_format_reads_back_the_runs_it_was_given(fmt: str, schedule: Schedule) -> None:
    jobs = READ_BACK[fmt](schedule)
    assert [(j.argv, j.env, j.times) for j in jobs] == [
        (run.argv, schedule.env, run.times) for run in schedule.runs
    ]


def test_a_crontab_job_also_gets_what_the_users_lines_above_set() -> None:
    """cron hands a job every assignment above it, the user's too: the check must as well."""
    text = "MAILTO=me@example.org\n" + crontab.render(memfuse_schedule())
    jobs = crontab.parse(text)
    assert all(dict(job.env)["MAILTO"] == "me@example.org" for job in jobs)
