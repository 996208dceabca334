"""memfuse's own state folder: where it is, the files it holds, and the check before use.

It holds the sync ledger, the run history, the lock, the log, the recall index and the note of
the store's generation. It must be a real folder of this user's, kept 0700.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from memfuse.confine import PRIVATE_DIR, UnsafePath
from memfuse.errors import WorkspaceError


class StateFolder:
    """The state folder and the name of everything in it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def ledger(self) -> Path:
        return self.path / "ledger.sqlite3"

    @property
    def recall_index(self) -> Path:
        return self.path / "recall.sqlite3"

    @property
    def runs(self) -> Path:
        return self.path / "runs.json"

    @property
    def lock(self) -> Path:
        return self.path / "lock"

    @property
    def log(self) -> Path:
        return self.path / "memfuse.log"

    @property
    def store_memo(self) -> Path:
        return self.path / "store.json"

    @property
    def server_log(self) -> Path:
        return self.path / "session-server.log"

    def exists(self) -> bool:
        return self.path.is_dir()

    def ensure(self, *, create: bool = True) -> Path:
        """The folder, checked (and made when `create`): a real folder of this user's, 0700.

        Raises UnsafePath when it is a link, not a folder, or owned by someone else; returns
        the path without creating it when `create` is False and it does not exist.
        """
        path = self.path
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            if not create:
                return path
            try:
                os.mkdir(path, PRIVATE_DIR)
            except FileExistsError:
                pass  # another run made it a moment ago: check what is there now
            except OSError as exc:
                raise WorkspaceError(f"cannot create {path}: {exc.strerror}") from None
            info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise UnsafePath(
                f"{path} is a symbolic link; memfuse keeps its state only in a real folder"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise UnsafePath(f"{path} is not a folder")
        if info.st_uid != os.geteuid():
            raise UnsafePath(
                f"{path} belongs to another user (uid {info.st_uid}); memfuse will not use it"
            )
        if stat.S_IMODE(info.st_mode) != PRIVATE_DIR:
            with contextlib.suppress(OSError):
                os.chmod(path, PRIVATE_DIR, follow_symlinks=False)
        return path
