"""File access confined to the workspace, which an agent writes and memfuse must not trust.

Every file memfuse reads or writes under the workspace goes through here:
- a read opens non-blocking (a FIFO cannot hang it), `fstat`s the open file, and accepts only a
  regular file whose real path lies inside the workspace's real path and whose size is under a
  cap; anything else raises `UnsafePath`, which the caller turns into one warning;
- a write resolves every link, requires the real path inside the workspace, opens the real
  parent folder, re-checks that the *open* folder is still inside (so swapping a component for a
  link after the check changes nothing), and creates the temp file relative to that folder
  with `O_NOFOLLOW`;
- a file memfuse owns in the workspace (`own`: RECENT.md, RECENT.kept.md, a roll-up, a backup)
  is read and written only as a regular file of one name: never through a link of its own
  name, opened `O_NOFOLLOW` and checked on the open descriptor (docs/security.md, "Links");

memfuse's own state folder (memfuse.state.folder) builds on the same checks.

The re-check of an open descriptor reads `/proc/self/fd` where the system has it (Linux); other
systems fall back to comparing the descriptor's device and inode with the resolved path's.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memfuse.errors import WorkspaceError

DEFAULT_READ_CAP = 16 * 1024 * 1024
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700

Writer = Callable[[int, bytes], int]  # os.write's shape; tests inject ENOSPC through it


class UnsafePath(WorkspaceError):
    """A workspace path memfuse refuses: it leads outside, or it is not a regular file."""


def within(root: Path | str, real: Path | str) -> bool:
    """Whether a resolved path is `root` or lies below it (both absolute and normalised, as
    os.path.realpath makes them). Compared as text: pathlib's parsing cost a sync of 100 000
    journals seconds."""
    top, found = os.fspath(root), os.fspath(real)
    return found == top or found.startswith(top.rstrip("/") + "/")


def nameable(path: str) -> bool:
    """Whether the file system can take `path` at all (JSON may hold a lone surrogate, which
    no file name encodes: os.stat raises UnicodeEncodeError, not OSError)."""
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        return False
    return True


def inside(root: Path, path: Path, *, own: bool = False) -> Path:
    """`path` with every link resolved (with `own`, but its own name's), when that lies inside
    `root` (itself resolved)."""
    if own:
        return inside(root, path.parent) / path.name
    real = os.path.realpath(path)
    if not within(root, real):
        raise UnsafePath(f"{path} resolves to {real}, outside the workspace {root}")
    return Path(real)


def _fd_path(fd: int) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def _check_open(root: Path, fd: int, real: Path, shown: Path) -> None:
    """Refuse an open descriptor that is not the file or folder checked to be inside `root`."""
    where = _fd_path(fd)
    if where is not None:
        if not within(root, where):
            raise UnsafePath(f"{shown} was moved outside the workspace while memfuse opened it")
        return
    opened, named = os.fstat(fd), os.stat(real)
    if (opened.st_dev, opened.st_ino) != (named.st_dev, named.st_ino):
        raise UnsafePath(f"{shown} changed while memfuse opened it")


def kind_of(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),  # lstat'ed: one put there since the path resolved
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_file(
    root: Path,
    path: Path,
    cap: int = DEFAULT_READ_CAP,
    *,
    one_link: bool = False,
    owner: int | None = None,
    own: bool = False,
) -> bytes:
    """The bytes of a regular file inside `root`, at most `cap` of them; with `one_link`, only
    of a file with no other name (a hard link passes every path check: its other name may be
    a file outside `root` that whoever wrote the link could not read); with `owner`, only of
    a file that user owns (checked on the open file: a swap after a check by path is seen);
    with `own`, never through a link of its own name.

    Raises FileNotFoundError when there is no such file, UnsafePath for everything memfuse
    refuses to read (the message names the file and says why).
    """
    real = inside(root, path, own=own)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(real, flags | (os.O_NOFOLLOW if own else 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO nobody writes
            raise UnsafePath(f"{path} is a socket or FIFO, not a regular file") from None
        if exc.errno == errno.ELOOP and own:
            raise UnsafePath(
                f"{path} is a symbolic link: memfuse reads and writes its own files only as"
                " files of their own, never through a link"
            ) from None
        raise UnsafePath(f"{path} cannot be opened: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"{path} is {kind_of(info.st_mode)}, not a regular file")
        if (one_link or own) and info.st_nlink > 1:
            raise UnsafePath(_hard_links(path, info.st_nlink))
        if owner is not None and info.st_uid != owner:
            raise UnsafePath(f"{path} belongs to another user")
        _check_open(root, fd, real, path)
        if info.st_size > cap:
            raise UnsafePath(_too_big(path, info.st_size, cap))
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:  # it grew while being read
                raise UnsafePath(_too_big(path, size, cap))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _hard_links(path: Path, links: int) -> str:
    return (
        f"{path} has {links} hard links, so it may be another file under another name;"
        " memfuse reads and writes only a file with one name"
    )


def _too_big(path: Path, size: int, cap: int) -> str:
    return f"{path} is {size / 1048576:.1f} MiB, above the {cap / 1048576:g} MiB read limit"


@contextlib.contextmanager
def open_folder(root: Path, folder: Path, *, create: bool = False) -> Iterator[int]:
    """A descriptor of `folder`, checked to be a real folder inside `root` once open."""
    real = inside(root, folder)
    if create:
        try:
            real.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(f"cannot create {folder}: {exc.strerror}") from None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise UnsafePath(f"{folder} cannot be opened as a folder: {exc.strerror}") from None
    try:
        _check_open(root, fd, real, folder)
        yield fd
    finally:
        os.close(fd)


def write_atomic(
    root: Path,
    path: Path,
    data: bytes,
    *,
    mode: int | None = None,
    create_parents: bool = False,
    write: Writer = os.write,
    new_only: bool = False,
    own: bool = False,
) -> Path:
    """Replace `path` (or the file a link inside `root` points to; with `own`, refused: a link,
    a file of several names) with `data`.

    Readers see the old file or the whole new one: a temp file in the same folder is written,
    fsynced and renamed over the target, then the folder is fsynced. On any error the temp file
    is removed and the old file is left byte-identical. Returns the real path written.
    With `new_only`, the file is put in place only while the name is free, in one step (a link,
    which no file made meanwhile can be under: FileChanged then, and nothing written).
    """
    real = inside(root, path, own=own)
    with open_folder(root, real.parent, create=create_parents) as folder:
        try:
            current = os.stat(real.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            current = None
        if current is not None and not stat.S_ISREG(current.st_mode):
            what = kind_of(current.st_mode)
            raise UnsafePath(f"{path} is {what}, not a file memfuse can replace")
        if current is not None and own and current.st_nlink > 1:
            raise UnsafePath(_hard_links(path, current.st_nlink))
        if mode is None:
            mode = stat.S_IMODE(current.st_mode) if current is not None else _default_mode()
        tmp = f".{real.name}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, PRIVATE_FILE, dir_fd=folder)
        try:
            view = memoryview(data)
            while view:
                written = write(fd, bytes(view[: 1 << 20]))
                view = view[written:]
            os.fchmod(fd, mode)
            os.fsync(fd)
            os.close(fd)
            fd = -1
            if new_only:
                try:
                    os.link(tmp, real.name, src_dir_fd=folder, dst_dir_fd=folder)
                except FileExistsError:
                    raise FileChanged(f"{path} was made meanwhile") from None
                os.unlink(tmp, dir_fd=folder)
            else:
                os.replace(tmp, real.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=folder)
            raise
        with contextlib.suppress(OSError):
            os.fsync(folder)
    return real


def _exists(name: str, folder: int) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class FileChanged(WorkspaceError):
    """The file is no longer what the caller read: read it again."""


class WorkspaceFiles:
    """One workspace's confined reads and writes, its real path resolved once per run."""

    def __init__(self, workspace: Path, read_cap: int = DEFAULT_READ_CAP) -> None:
        self.workspace = workspace
        self.root = Path(os.path.realpath(workspace))
        self.read_cap = read_cap

    def read(self, path: Path, *, own: bool = False) -> bytes:
        """A file of the workspace; with `own`, one of memfuse's, never through a link."""
        return read_file(self.root, path, self.read_cap, one_link=True, own=own)

    def write(self, path: Path, data: bytes, **options: Any) -> Path:
        """Every workspace file memfuse writes is its own: never written through a link."""
        return write_atomic(self.root, path, data, own=True, **options)

    def move_into(self, source: Path, folder: Path) -> Path:
        """Move `source` into `folder` (created if missing), never over an existing file.

        A link at `source` is moved as a link; the name gets `.1`, `.2`… when taken.
        """
        with (
            open_folder(self.root, source.parent) as src,
            open_folder(self.root, folder, create=True) as dst,
        ):
            stem, suffix = os.path.splitext(source.name)
            name, counter = source.name, 1
            while _exists(name, dst):
                name = f"{stem}.{counter}{suffix}"
                counter += 1
            os.rename(source.name, name, src_dir_fd=src, dst_dir_fd=dst)
            with contextlib.suppress(OSError):
                os.fsync(dst)
        return inside(self.root, folder) / name
