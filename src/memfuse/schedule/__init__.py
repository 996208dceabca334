"""memfuse's scheduled runs, described once and rendered for every scheduler people use.

`Schedule` (runs.py) holds the runs (argv and daily local times) and their environment;
`plan` builds this workspace's. A scheduler is one module implementing `base.Scheduler`
(render, install, remove, read back, its zone) plus one line in `registry`. The engines are
`install` (put in place, take out, the record `status` reads), `check` with `trial` (what
`cron --check` runs of a job) and `agents` (every agent the hosts configure: `--all-agents`).
runs.py, cronexpr.py, shwords.py and writers.py stand alone on the stdlib: no process, no file.
"""

from __future__ import annotations

from memfuse.schedule.runs import Job, ParseError, Run, Schedule, ScheduleError

__all__ = ["Job", "ParseError", "Run", "Schedule", "ScheduleError"]
