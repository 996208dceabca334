"""memfuse's five daily runs as one `Schedule` for this workspace, whatever the scheduler:
every program by its absolute path, the settings in effect as flags, `-q`, nothing redirected.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

from memfuse.schedule.runs import Run, Schedule
from memfuse.settings import Settings

SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
LOCK_WAIT = 300  # seconds a scheduled run waits for another's workspace lock
LIFECYCLE = ("sync", "surface", "tidy")


# Each of memfuse's scheduled commands: (the command, when, and why).
RUNS = (
    ("sync", ((14, 0), (22, 0)), "14:00 and 22:00: journal bullets into agent-memory"),
    ("surface", ((14, 5), (22, 5)), "14:05 and 22:05: RECENT.md for the next sessions"),
    ("tidy", ((3, 0),), "03:00: the store's sleep cycle, MEMORY.md check and backup"),
)


def label_for(workspace: Path) -> str:
    """The name of this workspace's schedule: memfuse's own, and another workspace's never."""
    real = os.path.realpath(workspace)
    return "memfuse-" + hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:10]


def memfuse_command() -> list[str]:
    """This memfuse, by absolute path: the script next to this Python, else the one on PATH."""
    beside = Path(sys.executable).parent / "memfuse"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside.absolute())]
    found = shutil.which("memfuse")
    if found:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "memfuse"]


def build(
    settings: Settings,
    *,
    archive: bool = False,
    memfuse: list[str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> Schedule:
    """The schedule for these settings, on this machine."""
    notes: list[str] = []
    memfuse = memfuse or memfuse_command()
    mcporter = shlex.split(settings.mcporter) or ["mcporter"]
    found = which(mcporter[0])
    if found:
        mcporter[0] = str(Path(found).absolute())
    elif settings.transport == "mcporter":
        notes.append(f"{mcporter[0]!r} was not found on this PATH: install mcporter first")
    node = which("node")
    if node is None and settings.transport == "mcporter":
        notes.append("node was not found on this PATH: mcporter needs it")
    folders = [str(Path(p).parent) for p in (node, mcporter[0], memfuse[0]) if p and "/" in p]
    path = ":".join(dict.fromkeys([*folders, *SYSTEM_PATH]))

    defaults = {f.name: f.default for f in fields(Settings)}
    options = ["--workspace", str(settings.workspace), "--mcporter", shlex.join(mcporter)]
    if settings.state_dir is not None:
        # Named, not left to the environment: a scheduler's has no XDG_STATE_HOME.
        options += ["--state-dir", str(settings.state_dir)]
    if settings.mcporter_config is not None:
        options += ["--mcporter-config", str(settings.mcporter_config)]
    for name in ("server", "transport"):
        value = getattr(settings, name)
        if value != defaults[name]:
            options += [f"--{name}", str(value)]
    if settings.rerank.enabled:
        notes.append(
            "the reranker's key comes from the environment, which a scheduler does not have:"
            " add AGENT_MEMORY_RERANK_API_KEY to the schedule's environment, or recall runs"
            " without the reranker"
        )
    runs = []
    for command, times, why in RUNS:
        extra = ["--archive"] if command == "tidy" and archive else []
        argv = (*memfuse, command, "-q", "--wait", str(LOCK_WAIT), *extra, *options)
        runs.append(Run(command, argv, times, why + (", weekly roll-up" if extra else "")))
    env = (("SHELL", "/bin/sh"), ("PATH", path))
    return Schedule(tuple(runs), env, label_for(settings.workspace), tuple(notes))


def home() -> Path:
    """$HOME, as every other program of the user's session has it (under sudo -E, a
    container or a test, it is not the password file's); that only when HOME is unset."""
    return Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir)
