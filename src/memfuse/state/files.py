"""memfuse's private files in its state folder: opened 0600, never through a link, a FIFO or
anything that is not a regular file."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from memfuse.workspace.confine import PRIVATE_FILE, UnsafePath, kind_of, real_root, write_atomic

# O_NONBLOCK: a FIFO planted under a state file name must not hang the open.
_PRIVATE_FLAGS = os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def open_private(path: Path, flags: int) -> int:
    """Open (creating 0600) a file in the state folder, refusing a link or a non-file there."""
    try:
        fd = os.open(path, flags | _PRIVATE_FLAGS, PRIVATE_FILE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(
                f"{path} is a symbolic link; memfuse will not write through it"
            ) from None
        if exc.errno == errno.ENXIO:
            raise UnsafePath(f"{path} is a socket or FIFO, not a file") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafePath(f"{path} is {kind_of(info.st_mode)}, not a file")
    return fd


def read_private(path: Path, limit: int) -> bytes:
    """Up to `limit` + 1 bytes of a state file, never through a link or a FIFO.
    FileNotFoundError when it is not there; UnsafePath when it is not a plain file."""
    check_private_file(path)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit + 1)


def check_private_file(path: Path) -> None:
    """Refuse a state file that is a link or not a regular file (None there is fine)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"{path} is a symbolic link; memfuse won't write through it")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{path} is {kind_of(info.st_mode)}, not a file")


def write_private(path: Path, data: bytes) -> None:
    """Replace a file of the state folder atomically (0600): a reader sees the old file or the
    whole new one, and nothing is written through a link planted in its place."""
    write_atomic(real_root(path.parent), path, data, mode=PRIVATE_FILE)
