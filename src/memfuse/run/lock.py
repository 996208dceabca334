"""The workspace lock: one memfuse run per workspace at a time.

An OS advisory lock (flock) on the state folder's `lock`: the kernel drops it when the process
dies, so a killed run never leaves a stale lock behind. The file's content (pid, command) is
informational.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from types import TracebackType

from memfuse.confine import UnsafePath
from memfuse.errors import LockedError, WorkspaceError
from memfuse.state.folder import StateFolder

POLL_SECONDS = 0.1


class WorkspaceLock:
    def __init__(self, state: StateFolder, command: str, wait: float | None = None) -> None:
        self.state = state
        self.path = state.lock
        self.command = command
        self.wait = wait or 0.0
        self._fd: int | None = None

    def __enter__(self) -> WorkspaceLock:
        try:
            fd = self._open()
        except OSError as exc:
            raise WorkspaceError(
                f"cannot create the lock file {self.path}: {exc.strerror}"
            ) from None
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    os.close(fd)
                    waited = f" after waiting {self.wait:g}s" if self.wait else ""
                    raise LockedError(
                        f"another memfuse run holds {self.path}{waited} ({holder});"
                        " use --wait SECONDS to queue"
                    ) from None
                time.sleep(POLL_SECONDS)
        # Who holds the lock is only informational: a full disk must not stop the run here.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.write(fd, f"pid {os.getpid()} {self.command}\n".encode())
        self._fd = fd
        return self

    def _open(self) -> int:
        """The lock file; one planted in its place (a folder, a link, a FIFO) is moved aside
        once, so that it cannot stop every later run."""
        try:
            return self.state.open(self.state.LOCK, os.O_RDWR)
        except UnsafePath as exc:
            self.state.quarantine(self.state.LOCK, str(exc))
            return self.state.open(self.state.LOCK, os.O_RDWR)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", errors="replace").strip()
    except OSError:
        text = ""
    return text or "holder unknown"


def lock_holder(state: StateFolder) -> str | None:
    """Who holds the workspace lock right now, or None when it is free (never takes it)."""
    if not state.exists():
        return None
    try:
        fd = state.open(state.LOCK, os.O_RDONLY, create=False)
    except (OSError, UnsafePath):
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
