"""The note's hand on the journal file (memfuse.workspace.note plans what to add; this adds
it): one descriptor, opened O_APPEND, checked as every confined read is, that reads, writes
and takes back.

- All or nothing: the note's bytes are written on that descriptor, fsynced, and on any error
  (a full disk after a partial write, an EIO at fsync) the file is cut back to the size it
  was read at, on the same descriptor, when what follows that size is the note's own bytes
  (nothing another writer appended after them is ever cut).
- The tail, not the file: after a note, `Marks` keep where its line begins and its bytes (in
  the process, and the latest in the state folder). The next note on the same file (same
  inode, that line in place, the SHA-256 of every byte before it unchanged) parses only from
  that line to the end, at most TAIL_MAX; anything else (a journal no note marked, an editor
  that saved by rename, an edit above, a dreaming marker in the tail, which pairs with one
  above) reads the file whole.
- Once: the write is checked to be in the file the path names, where it was planned; when it
  is not (an editor's rename landed meanwhile), `count_lines` of the replaced file is what the
  next try looks for before it writes again.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memfuse.confine import (
    FileChanged,
    UnsafePath,
    Writer,
    _check_open,
    inside,
    kind_of,
    open_folder,
)
from memfuse.errors import MemfuseError
from memfuse.host import DREAMING_TAG
from memfuse.state.folder import StateFolder
from memfuse.untrusted import UntrustedJSON, load_json
from memfuse.workspace.journal import decode

PositionalReader = Callable[[int, int, int], bytes]  # os.pread's shape: tests count the bytes read
TAIL_MAX = 1 << 20  # bytes after the last note read in place of the whole journal
MARKS_KEPT = 64  # journals whose last note a process remembers
CHUNK = 1 << 20


class NotTakenBack(OSError):
    """A write failed, and what it wrote could not be cut back: another writer appended after."""


@dataclass(frozen=True)
class Mark:
    """Where the last note of a journal went: enough for the next note to read only the rest.

    Reading from the start of the note's line gives the same blocks as reading the whole file:
    a `- ` line at column 0 that reads back as a bullet closes every block open before it but
    its list, so what follows it parses alike either way."""

    dev: int
    ino: int
    start: int  # where the note's line begins, in bytes
    seal: bytes  # the line's bytes, newline included
    line: int  # its 1-based line
    key: str  # its section
    base: tuple[tuple[str, bool, int], ...]  # bullets before it: (section, numbered, count)
    encoding: str
    digest: str  # SHA-256 of the bytes before `start`, checked against the file before use


class Marks:
    """The last note's `Mark` of each journal a process noted in, the oldest forgotten; with a
    state folder, the latest MARKS_SAVED of them kept there too, so that a new `serve`
    process (an MCP client starts one a session) reads the tail from its first note on. A
    mark read back is only a hint: the inode, the seal and the digest of every byte before it
    are checked against the file before it is used, and a file that does not parse is as none."""

    def __init__(self, state: StateFolder | None = None) -> None:
        # read when made (serve's start-up), not by the first note, which pays nothing more
        self._kept: OrderedDict[str, Mark] = OrderedDict(_load(state))
        self._state = state

    def get(self, real: Path) -> Mark | None:
        return self._kept.get(os.fspath(real))

    def keep(self, real: Path, mark: Mark) -> None:
        self._kept.pop(os.fspath(real), None)
        self._kept[os.fspath(real)] = mark
        while len(self._kept) > MARKS_KEPT:
            self._kept.popitem(last=False)
        if self._state is not None:
            saved = dict(list(self._kept.items())[-MARKS_SAVED:])
            data = json.dumps({k: _saved(m) for k, m in saved.items()}).encode()
            with contextlib.suppress(OSError, MemfuseError):  # a cache: lost, the file is read
                self._state.write(MARKS_FILE, data)


MARKS_FILE = "note-marks.json"
ENCODINGS = frozenset(("utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"))  # a note's
MARKS_SAVED = 4  # journals whose last note's mark the state folder keeps (today's, mostly)
_MARKS_LIMIT = 256 * 1024


def _saved(mark: Mark) -> dict[str, object]:
    # vars, not asdict: asdict copies the base's every tuple (121 ms a note at 1 400 sections)
    return {**vars(mark), "seal": mark.seal.hex(), "base": [list(b) for b in mark.base]}


def _load(state: StateFolder | None) -> dict[str, Mark]:
    """The marks the state folder keeps; those that do not read as marks left out."""
    if state is None:
        return {}
    try:
        found = load_json(state.read(MARKS_FILE, _MARKS_LIMIT), limit=_MARKS_LIMIT)
    except (OSError, MemfuseError, UntrustedJSON):
        return {}
    marks: dict[str, Mark] = {}
    for where, fields in found.items() if isinstance(found, dict) else ():
        try:
            base = tuple((str(k), bool(numbered), int(n)) for k, numbered, n in fields["base"])
            mark = Mark(int(fields["dev"]), int(fields["ino"]), int(fields["start"]),
                        bytes.fromhex(fields["seal"]), int(fields["line"]), str(fields["key"]),
                        base, str(fields["encoding"]), str(fields["digest"]))  # fmt: skip
            if not (mark.key.isascii() and mark.key.isdigit() and len(mark.key) == 4):
                continue  # no section key (HHMM)
            # what the file cannot check: where to read from, in what encoding, from what line
            if (
                mark.encoding not in ENCODINGS
                or mark.start < 0
                or mark.line < 2
                or not all(n >= 0 for _, _, n in base)
            ):
                continue
        except (KeyError, TypeError, ValueError, LookupError):
            continue
        marks[str(where)] = mark
    return marks


@dataclass(frozen=True)
class View:
    """What a note is planned on: the whole file, or its bytes from a mark's line on."""

    raw: bytes
    mark: Mark | None  # None: `raw` is the whole file
    before: Any = field(default_factory=hashlib.sha256)  # the digest of the bytes before `raw`


class OpenJournal:
    """An open journal: regular, of one name, inside the workspace, under the read cap."""

    def __init__(self, fd: int, folder: int, name: str, real: Path, info: os.stat_result) -> None:
        self.fd, self.folder, self.name, self.real = fd, folder, name, real
        self.dev, self.ino, self.size = info.st_dev, info.st_ino, info.st_size

    def view(self, marks: Marks, read: PositionalReader) -> View:
        """The tail after the last note when its mark still holds — the same file, the line
        in place, every byte before it as it was — else the whole file."""
        mark = marks.get(self.real)
        if (
            mark is not None
            and (mark.dev, mark.ino) == (self.dev, self.ino)
            and mark.start + len(mark.seal) <= self.size
            and self.size - mark.start <= TAIL_MAX
        ):
            raw = self.read(read, mark.start, self.size - mark.start)
            # A dreaming marker pairs with one above the mark: the tail alone cannot say.
            if raw.startswith(mark.seal) and DREAMING_TAG.encode(mark.encoding) not in raw:
                before = self.digest(mark.start)  # an edit in place above leaves the seal
                if before.hexdigest() == mark.digest:
                    return View(raw, mark, before)
        return View(self.read(read, 0, self.size), None)

    def digest(self, end: int) -> Any:
        """The digest of the file's first `end` bytes (hashed, not parsed: `read` counts
        what a note parses)."""
        found = hashlib.sha256()
        for offset in range(0, end, CHUNK):
            found.update(os.pread(self.fd, min(CHUNK, end - offset), offset))
        return found

    def read(self, read: PositionalReader, offset: int, size: int) -> bytes:
        chunks: list[bytes] = []
        while size > 0:
            chunk = read(self.fd, min(size, CHUNK), offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def append(self, suffix: bytes, write: Writer) -> None:
        """Write `suffix` at the end and fsync it; on any error, take it back and raise."""
        view = memoryview(suffix)
        try:
            while view:
                written = write(self.fd, bytes(view[:CHUNK]))
                if written <= 0:
                    raise OSError(errno.EIO, "the write made no progress")
                view = view[written:]
            os.fsync(self.fd)
        except OSError as exc:
            # a write that failed wrote nothing: with none of ours there, what follows the
            # size read is another's, even the same note by another process — never cut
            if len(view) < len(suffix) and not self.take_back(suffix):
                raise NotTakenBack(exc.errno, exc.strerror) from None
            raise
        except BaseException:
            if len(view) < len(suffix):
                self.take_back(suffix)
            raise

    def take_back(self, suffix: bytes) -> bool:
        """Cut the file back to the size it was read at, when all past it is the note's;
        whether the file is now as it was."""
        try:
            now = os.fstat(self.fd).st_size
            if now == self.size:
                return True
            if now > self.size and suffix.startswith(os.pread(self.fd, len(suffix) + 1, self.size)):
                os.ftruncate(self.fd, self.size)
                with contextlib.suppress(OSError):  # cut: what fsync says changes nothing
                    os.fsync(self.fd)
                return True
        except OSError:
            pass
        return False

    def landed_in_place(self, suffix: bytes) -> bool:
        """Whether the write is where it was planned, in the file the path still names."""
        try:
            named = os.stat(self.name, dir_fd=self.folder, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if (named.st_dev, named.st_ino) != (self.dev, self.ino):
            return False
        return os.pread(self.fd, len(suffix), self.size) == suffix


@contextlib.contextmanager
def opened(root: Path, path: Path, cap: int) -> Iterator[OpenJournal | None]:
    """The journal at `path` open for a note; None when there is none (nor its folder)."""
    real = inside(root, path, own=True)  # today's journal itself, never a link's target
    if not os.path.isdir(real.parent):
        yield None
        return
    with open_folder(root, real.parent) as folder:
        flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(real.name, flags, dir_fd=folder)
        except FileNotFoundError:
            yield None
            return
        except OSError as exc:
            with contextlib.suppress(OSError):
                mode = os.stat(real.name, dir_fd=folder, follow_symlinks=False).st_mode
                if not stat.S_ISREG(mode):
                    raise UnsafePath(f"{path} is {kind_of(mode)}, not a regular file") from None
            raise UnsafePath(f"{path} cannot be opened: {exc.strerror}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise UnsafePath(f"{path} is {kind_of(info.st_mode)}, not a regular file")
            if info.st_nlink == 0:  # renamed over since it was opened: an editor's save
                raise FileChanged(f"{path} was replaced")
            if info.st_nlink != 1:
                raise UnsafePath(
                    f"{path} has {info.st_nlink} hard links, so it may be a file from outside"
                    " the workspace; memfuse writes only a file with one name"
                )
            _check_open(root, fd, real, path)
            if info.st_size > cap:
                raise UnsafePath(
                    f"{path} is {info.st_size / 1048576:.1f} MiB, above the"
                    f" {cap / 1048576:g} MiB read limit"
                )
            yield OpenJournal(fd, folder, real.name, real, info)  # as checked: one fstat
        finally:
            os.close(fd)


def count_lines(raw: bytes, text: str) -> int:
    """How many lines of the file are the note's own line, `- text` (any newline)."""
    line = f"- {text}"
    return sum(1 for found in decode(raw)[0].split("\n") if found == line)
