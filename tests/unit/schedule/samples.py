"""The schedules the format tests share: memfuse's own three runs, and hostile argv."""

from __future__ import annotations

from pathlib import Path

from memfuse.schedule import Run, Schedule

MEMFUSE = "/home/u/.local/bin/memfuse"
WORKSPACE = "/home/u/.openclaw/workspace"

# Every argument a hostile workspace path could smuggle into a scheduler's file.
HOSTILE_ARGS = (
    '/w/it\'s 100% "$HOME" \\ a\\%b \\',  # both quotes, %, $, backslashes, one before %
    "ünï €",
    "-x",
    "--workspace=/a b",
    "",
    "#not-a-comment",
    "~",
    "a;b",
    ";",
    "\\;",
    "\\%%\\",
    "`id`",
    "$(id)",
    "${HOME}",
    "$HOME",
    "*",
    "2",
    "A=b",
    "\t",
    "%n %h %%",
    "'",
    '"',
    "trailing\\",
)


def memfuse_schedule(memfuse: str = MEMFUSE, *, workspace: str = WORKSPACE) -> Schedule:
    """The runs `memfuse cron` prints today, for one workspace."""
    options = ("--workspace", workspace, "--mcporter", "/usr/bin/mcporter")
    return Schedule(
        runs=(
            Run("sync", (memfuse, "sync", "-q", "--wait", "300", *options), ((14, 0), (22, 0)),
                "14:00 and 22:00: journal bullets into agent-memory"),
            Run("surface", (memfuse, "surface", "-q", "--wait", "300", *options),
                ((14, 5), (22, 5)), "14:05 and 22:05: RECENT.md for the next sessions"),
            Run("tidy", (memfuse, "tidy", "-q", *options), ((3, 0),),
                "03:00: the store's sleep cycle, MEMORY.md check and backup"),
        ),
        env=(("SHELL", "/bin/sh"), ("PATH", "/home/u/.local/bin:/usr/local/bin:/usr/bin:/bin")),
        label="memfuse-ab12cd34",
        notes=("node was not found on this PATH: mcporter needs it",),
    )  # fmt: skip


def hostile_schedule(program: str = MEMFUSE) -> Schedule:
    """One run whose every argument, and one environment value, is hostile; its times need
    more than one line (or job) per run in minute-based formats."""
    return Schedule(
        runs=(
            Run("sync", (program, "sync", *HOSTILE_ARGS), ((22, 30), (14, 0), (22, 0)),
                "100% hostile \\"),
            Run("tidy", (program, "tidy", "-q"), ((3, 0),), "tidy"),
        ),
        env=(
            ("SHELL", "/bin/sh"),
            ("PATH", "/opt/my tools/bin:/usr/bin:/bin"),
            ("MEMFUSE_NOTE", "a'b \" $HOME %n \\ ü"),
            ("MEMFUSE_PAD", " padded "),
        ),
        label="memfuse-0f0f0f0f",
    )  # fmt: skip


def argv_printer(directory: Path) -> str:
    """An executable at a path with a space that prints its argv, NUL-separated: the
    program a scheduler's file names, to see what a real shell would hand it."""
    folder = directory / "bin dir"
    folder.mkdir()
    script = folder / "print-argv"
    script.write_text('#!/bin/sh\nprintf \'%s\\0\' "$0" "$@"\n')
    script.chmod(0o755)
    return str(script)
