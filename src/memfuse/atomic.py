"""Atomic file replacement: readers see the old file or the complete new one, never half.

Write to a temp file in the target's own folder, fsync it, rename it over the target, fsync
the folder. A symlinked target keeps its link: the file it points to is what gets replaced.
On any error the temp file is removed and the old file is left byte-identical.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

Opener = Callable[[int, bytes], int]  # os.write's shape; tests inject ENOSPC through it


def write_atomic(path: Path, data: bytes, *, write: Opener = os.write) -> Path:
    """Replace `path` (or, if it is a symlink, its target) with `data`. Returns the real path."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    folder = target.parent
    mode = _mode_for(target)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    try:
        view = memoryview(data)
        while view:
            written = write(fd, bytes(view[: 1 << 20]))
            view = view[written:]
        os.fchmod(fd, mode)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)
    return target


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
