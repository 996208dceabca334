"""The one error base class memfuse raises on purpose, and the exit codes it maps to."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes, as documented in docs/operations.md."""

    OK = 0
    FATAL = 1
    USAGE = 2
    STRICT = 3
    ESCALATED = 4  # the store has failed for runs on end, or no success for too long
    # `cron --check`: nothing would fail, but a job naming a store setup of its own (another
    # mcporter or config) was not tried — neither a pass nor a "would fail".
    UNCHECKED = 5
    NO_WORKSPACE = 66  # the workspace does not exist or is not a folder (sysexits' EX_NOINPUT)
    LOCKED = 75
    # The store could not be reached and its setup is why (a config file that is not there, no
    # mcporter, a server script that is not there): sysexits' EX_CONFIG, not a store outage.
    SETUP = 78
    INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + 2, as shells report a program it stopped


class MemfuseError(Exception):
    """An expected failure: reported as one line on stderr, never with a traceback."""

    exit_code: ExitCode = ExitCode.FATAL


class ConfigError(MemfuseError):
    """A configuration file, flag or environment variable that cannot be used."""

    exit_code = ExitCode.USAGE


class WorkspaceError(MemfuseError):
    """The workspace is missing, not a folder, or cannot be written."""


class NoWorkspace(WorkspaceError):
    """The workspace is not there: a typo in the path, an unmounted disk. Never a healthy run."""

    exit_code = ExitCode.NO_WORKSPACE


class LockedError(MemfuseError):
    """Another memfuse run holds the workspace lock."""

    exit_code = ExitCode.LOCKED
