"""memfuse's scheduled runs, described once and rendered for every scheduler people use.

`Schedule` holds the runs (argv and daily local times) and their environment; each module
renders it for one scheduler and reads that scheduler's text back into `Job`s for a check:
`crontab` (a marked block merged into the user's crontab), `systemd` (user timers), `launchd`
(macOS agents) and `openclaw` (the agent runtime's own Gateway cron). Nothing here imports the
rest of memfuse (its errors aside), runs a process or touches a file: the caller writes,
installs and checks.
"""

from __future__ import annotations

from memfuse.schedule.runs import Job, ParseError, Run, Schedule, ScheduleError

__all__ = ["Job", "ParseError", "Run", "Schedule", "ScheduleError"]
