"""memfuse's own state folder: where it is, the files it holds, and how each is opened.

Where it lives and how it is checked: docs/security.md ("State the agent cannot reach"). Once
checked, the folder is opened and every file in it is opened relative to it with `O_NOFOLLOW`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

from memfuse.confine import PRIVATE_DIR, PRIVATE_FILE, UnsafePath, kind_of
from memfuse.errors import WorkspaceError
from memfuse.untrusted import load_json

# O_NONBLOCK: a FIFO planted under a state file name must not hang the open.
_OPEN_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_PROC_FD = Path("/proc/self/fd")


def default_state_dir(workspace: Path, env: Mapping[str, str]) -> Path:
    """Where a workspace's state lives unless `--state-dir` says (docs/security.md)."""
    real = os.path.realpath(workspace)
    base = xdg_folder(env, "XDG_STATE_HOME", ".local/state")
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(real))[:40] or "root"
    digest = hashlib.sha256(real.encode("utf-8", errors="surrogateescape")).hexdigest()[:16]
    return base / "memfuse" / f"{name.lstrip('.') or 'ws'}-{digest}"


def xdg_folder(env: Mapping[str, str], variable: str, default: str) -> Path:
    """One of the XDG base folders: `variable`'s value, or `default` under the home folder
    where it is unset or relative (the XDG spec: a relative value is to be ignored)."""
    base = env.get(variable, "")
    if os.path.isabs(base):
        return Path(base)
    return Path(env.get("HOME") or Path.home()) / default


class StateFolder:
    """The state folder and the name of everything in it."""

    LEDGER = "ledger.sqlite3"
    RECALL_INDEX = "recall.sqlite3"
    RUNS = "runs.json"
    RUNS_LOCK = "runs.lock"  # held a moment while a run adds itself (a refused run too)
    LOCK = "lock"
    LOG = "memfuse.log"
    STORE_MEMO = "store.json"
    SERVER_LOG = "session-server.log"
    RECENT_WRITTEN = "recent-written.md"  # RECENT.md as memfuse last wrote it
    RECENT_KEPT = "recent-kept.md"  # the kept lines, when the copy beside RECENT.md is refused
    PAUSED = "sync-paused"  # `memfuse rollback` in force, since when: kept apart from the ledger

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self.notices: list[str] = []  # what was moved aside, for the run to tell a person

    # --- names -------------------------------------------------------------------------
    @property
    def ledger(self) -> Path:
        return self.path / self.LEDGER

    @property
    def recall_index(self) -> Path:
        return self.path / self.RECALL_INDEX

    @property
    def runs(self) -> Path:
        return self.path / self.RUNS

    @property
    def lock(self) -> Path:
        return self.path / self.LOCK

    @property
    def log(self) -> Path:
        return self.path / self.LOG

    @property
    def server_log(self) -> Path:
        return self.path / self.SERVER_LOG

    # --- the folder --------------------------------------------------------------------
    def exists(self) -> bool:
        return self.path.is_dir()

    def ensure(self, *, create: bool = True) -> Path:
        """The folder, checked (and made, with the one above it, when `create`); UnsafePath
        when it is not a real folder of this user's that no one else can write."""
        if self._fd is not None:
            return self.path
        parent = self.path.parent
        if create:
            try:
                parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
            except OSError as exc:
                raise WorkspaceError(f"cannot create {parent}: {exc.strerror}") from None
        if parent.exists():
            _check_folder(parent, tighten=parent.name == "memfuse")
        try:
            os.lstat(self.path)
        except FileNotFoundError:
            if not create:
                return self.path
            try:
                os.mkdir(self.path, PRIVATE_DIR)
            except FileExistsError:
                pass  # another run made it a moment ago: check what is there now
            except OSError as exc:
                raise WorkspaceError(f"cannot create {self.path}: {exc.strerror}") from None
        _check_folder(self.path, tighten=True)
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        opened, named = os.fstat(fd), os.lstat(self.path)
        if (opened.st_dev, opened.st_ino) != (named.st_dev, named.st_ino):
            os.close(fd)
            raise UnsafePath(f"{self.path} changed while memfuse opened it")
        self._fd = fd
        return self.path

    @property
    def fd(self) -> int:
        """The open folder (checked by `ensure`, which this calls)."""
        if self._fd is None:
            self.ensure()
        assert self._fd is not None
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def reach(self, name: str) -> str:
        """A path that reaches `name` through the open folder, for what can only open by path
        (SQLite): `/proc/self/fd/N/name` where the system has it (docs/security.md)."""
        fd = self.fd
        if (_PROC_FD / str(fd)).is_dir():
            return str(_PROC_FD / str(fd) / name)
        return str(self.path / name)

    # --- files -------------------------------------------------------------------------
    def check(self, name: str) -> None:
        """Refuse an entry of the folder that memfuse must not use (None there is fine)."""
        try:
            info = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        _check_file(self.path / name, info)

    def open(self, name: str, flags: int, *, create: bool = True) -> int:
        """Open (creating 0600) a file of the folder, relative to the open folder; UnsafePath
        for a link, a FIFO, a folder, a hard link or another user's file."""
        path = self.path / name
        try:
            fd = os.open(name, flags | _OPEN_FLAGS | (os.O_CREAT if create else 0),
                         PRIVATE_FILE, dir_fd=self.fd)  # fmt: skip
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePath(f"{path} is a symbolic link; memfuse will not use it") from None
            if exc.errno == errno.ENXIO:
                raise UnsafePath(f"{path} is a socket or FIFO, not a file") from None
            if exc.errno == errno.EISDIR:
                raise UnsafePath(f"{path} is a directory, not a file") from None
            raise
        try:
            _check_file(path, os.fstat(fd))
        except UnsafePath:
            os.close(fd)
            raise
        return fd

    def database(self, name: str, sidecars: tuple[str, ...], *, create: bool) -> str | None:
        """The path SQLite reaches a file of the folder by, its sidecars checked (created 0600
        when `create`); None when it is not there and not to be created."""
        for suffix in sidecars:
            self.check(f"{name}{suffix}")
        if create:
            os.close(self.open(name, os.O_RDWR))
        else:
            try:
                os.stat(name, dir_fd=self.fd, follow_symlinks=False)
            except FileNotFoundError:
                return None
        return self.reach(name)

    def read(self, name: str, limit: int) -> bytes:
        """Up to `limit` + 1 bytes of a file of the folder. FileNotFoundError without it."""
        fd = self.open(name, os.O_RDONLY, create=False)
        with os.fdopen(fd, "rb") as handle:
            return handle.read(limit + 1)

    def write(self, name: str, data: bytes) -> None:
        """Replace a file of the folder atomically (0600) with `data`."""
        self.check(name)
        self.replace(name, lambda fd: write_all(fd, data))

    def replace(self, name: str, fill: Callable[[int], None]) -> os.stat_result:
        """Replace a file of the folder atomically (0600) with what `fill` writes to the open
        temp file; the new file's stat."""
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, PRIVATE_FILE, dir_fd=self.fd)
        try:
            fill(fd)
            os.fsync(fd)
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
            return os.fstat(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.fd)
            raise
        finally:
            os.close(fd)

    def set_aside(self, name: str) -> list[str]:
        """The names `quarantine` moved `name` (not its sidecars) aside to, oldest first."""
        stem = f"{name}.bad-"
        try:
            names = os.listdir(self.fd)
        except OSError:
            return []
        return sorted(n for n in names if n.startswith(stem))

    def rename(self, name: str, new: str) -> None:
        os.rename(name, new, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def remove(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)

    def quarantine(self, name: str, why: str) -> str:
        """Move an entry memfuse cannot use aside (`name.bad-<time>`) to start it afresh."""
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S")
        aside = f"{name}.bad-{stamp}-{secrets.token_hex(2)}"
        try:
            self.rename(name, aside)
        except FileNotFoundError:
            return ""
        notice = (
            f"memfuse's {self.path / name} was not usable ({why}): moved aside to {aside};"
            " it starts afresh"
        )
        self.notices.append(notice)
        return notice


def note_generation(state: StateFolder, generation: int, when: datetime) -> None:
    """Remember the agent-memory generation `doctor` saw, and when."""
    data = json.dumps({"generation": generation, "seen": when.isoformat(timespec="seconds")})
    state.write(state.STORE_MEMO, data.encode())


def last_generation(state: StateFolder) -> tuple[int, str] | None:
    """(generation, when) as `doctor` last saw it, or None."""
    if not state.exists():
        return None
    try:
        value = load_json(state.read(state.STORE_MEMO, 4096), limit=4096)
        return int(value["generation"]), str(value["seen"])
    except (OSError, UnsafePath, ValueError, TypeError, KeyError):
        return None


def paused_since(state: StateFolder) -> str | None:
    """Since when `memfuse rollback` has sync paused, from the file kept apart from the ledger
    (so that a ledger lost or set aside cannot undo it); None when sync is not paused."""
    try:
        raw = state.read(state.PAUSED, 64)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnsafePath):
        return "an unknown time (its record cannot be read)"
    text = raw.decode("ascii", errors="replace").strip()
    try:
        return datetime.fromisoformat(text).isoformat(timespec="seconds")
    except ValueError:
        return "an unknown time (its record is not a date)"


def set_paused(state: StateFolder, since: str | None) -> None:
    """Record the pause (None: lift it), atomically; a text that is not a date holds too."""
    if since is None:
        state.remove(state.PAUSED)
    else:
        state.write(state.PAUSED, since.encode("ascii", errors="replace")[:64])


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write all of `data` to `fd`, a MiB at a time."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[: 1 << 20]) :]


def fingerprint(info: os.stat_result) -> str:
    """What changes when a file is replaced or written: a file with the same one is the file
    seen before (a user cannot set ctime back)."""
    return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def _check_folder(path: Path, *, tighten: bool) -> None:
    """A real folder that no one else may write: ours (tightened to 0700 when `tighten`), or,
    for the folder above the state folder, root's or one with the sticky bit (like /tmp)."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"{path} is a symbolic link; memfuse keeps its state in a real folder")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePath(f"{path} is not a folder")
    mine = info.st_uid == os.geteuid()
    if not mine and (tighten or info.st_uid != 0):
        owner = info.st_uid
        raise UnsafePath(f"{path} belongs to another user (uid {owner}); memfuse won't use it")
    mode = stat.S_IMODE(info.st_mode)
    if mine and tighten and mode != PRIVATE_DIR:
        with contextlib.suppress(OSError):
            os.chmod(path, PRIVATE_DIR, follow_symlinks=False)
        mode = stat.S_IMODE(os.lstat(path).st_mode)
    if mode & 0o022 and not (not tighten and mode & stat.S_ISVTX):
        raise UnsafePath(f"{path} is writable by others (mode {mode:o}); memfuse will not use it")


def _check_file(path: Path, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"{path} is a symbolic link; memfuse will not use it")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{path} is {kind_of(info.st_mode)}, not a file")
    if info.st_nlink > 1:
        raise UnsafePath(f"{path} has {info.st_nlink} hard links; memfuse will not use it")
    if info.st_uid != os.geteuid():
        raise UnsafePath(f"{path} belongs to another user (uid {info.st_uid})")
