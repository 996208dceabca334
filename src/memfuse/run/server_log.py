"""The stderr of the store server the session transport starts, kept in the state folder
(0600, appended), cut back so that it cannot grow run after run, and read back for the line
that names why the server failed."""

from __future__ import annotations

import os
from typing import TextIO

from memfuse.errors import MemfuseError
from memfuse.report import cause
from memfuse.state.folder import StateFolder
from memfuse.store.diagnose import node_abi
from memfuse.untrusted import printable

SERVER_LOG_MAX = 1 << 20  # the log is cut back above 1 MiB…
SERVER_LOG_KEEP = 256 * 1024  # …to its last 256 KiB


def _cut_back(fd: int) -> int:
    """Above SERVER_LOG_MAX, keep the log's last SERVER_LOG_KEEP bytes; its size after."""
    size = os.fstat(fd).st_size
    if size > SERVER_LOG_MAX:
        kept = os.pread(fd, SERVER_LOG_KEEP, size - SERVER_LOG_KEEP)
        os.ftruncate(fd, 0)
        os.write(fd, kept)
        size = len(kept)
    return size


class ServerLog:
    """The session server's stderr log in a state folder, for one run."""

    def __init__(self, state: StateFolder) -> None:
        self.state = state
        self._start: int | None = None  # where this run's part starts, once a server wrote

    def for_server(self) -> TextIO:
        """The log opened for a server to append its stderr to, cut back first."""
        fd = self.state.open(self.state.SERVER_LOG, os.O_RDWR | os.O_APPEND)
        self._start = _cut_back(fd)
        return open(fd, "a+", encoding="utf-8", errors="replace")

    def trim(self) -> None:
        """Cut the log back if it grew past SERVER_LOG_MAX while its server ran (serve keeps
        one for days; it appends, so what it writes after the cut lands after the kept tail)."""
        fd = self._existing(os.O_RDWR | os.O_APPEND)
        if fd is None:
            return
        try:
            if os.fstat(fd).st_size > SERVER_LOG_MAX:
                _cut_back(fd)
                self._start = 0
        finally:
            os.close(fd)

    def said(self) -> str | None:
        """The line the server wrote during this run that names why it failed (`Error: Cannot
        find module …`, not the `Node.js v20` it ends with), unmasked; or None."""
        fd = self._existing(os.O_RDONLY) if self._start is not None else None
        if fd is None or self._start is None:
            return None
        try:
            size = os.fstat(fd).st_size
            start = max(self._start, size - 16384)
            tail = os.pread(fd, size - start, start).decode("utf-8", "replace")
        finally:
            os.close(fd)
        said = node_abi(tail) or (cause(tail, lines=1) if tail.strip() else None)
        return printable(said) if said else None

    def _existing(self, flags: int) -> int | None:
        try:
            return self.state.open(self.state.SERVER_LOG, flags, create=False)
        except (OSError, MemfuseError):
            return None
