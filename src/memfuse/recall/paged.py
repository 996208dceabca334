"""A file of arrays behind a JSON header, each on a page of its own, mapped back without a copy
(the model's cache, model_cache.py; the recall index's vectors, matrix.py): a 16-byte magic,
the header's length (8 bytes, little-endian), the header (JSON: the writer's fields, `arrays`
— each one's dtype, shape, offset and bytes — and `data`, the bytes past the header's page),
then the arrays. Input memfuse did not just make: every bound is checked.
"""

from __future__ import annotations

import contextlib
import json
import math
import mmap
import os
import time
from collections.abc import Callable
from typing import Any

from memfuse.state.folder import StateFolder, write_all

ALIGN = 4096  # each array starts on a page: a mapped array can be told how it is read
STALE = 600.0  # seconds untouched after which a temp file is a killed writer's
DTYPES = frozenset({"int8", "uint8", "int32", "uint32", "int64", "float32", "float64"})


def write(fd: int, magic: bytes, fields: dict[str, Any], arrays: dict[str, Any]) -> None:
    """Write the file on `fd`: the header, then the arrays in order."""
    table: dict[str, list[Any]] = {}
    offset = 0
    for name, array in arrays.items():
        table[name] = [array.dtype.name, list(array.shape), offset, array.nbytes]
        offset += padded(array.nbytes)
    head = json.dumps({**fields, "arrays": table, "data": offset}, sort_keys=True).encode()
    prefix = magic + len(head).to_bytes(8, "little") + head
    write_all(fd, prefix + bytes(padded(len(prefix)) - len(prefix)))
    for array in arrays.values():
        for piece in chunk(array):
            write_all(fd, piece)


def header(
    mapped: mmap.mmap, magic: bytes, most: int, data_most: int
) -> tuple[dict[str, Any], int]:
    """The header (at most `most` bytes, saying at most `data_most` bytes of data), and where
    the data starts; ValueError for anything else."""
    if mapped[: len(magic)] != magic:
        raise ValueError("it is not a file memfuse wrote")
    length = int.from_bytes(mapped[len(magic) : len(magic) + 8], "little")
    if not 0 < length <= min(most, len(mapped)):
        raise ValueError("its header is out of bounds")
    at = len(magic) + 8
    try:
        found = json.loads(mapped[at : at + length].decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ValueError("its header is not JSON") from None
    if not isinstance(found, dict) or not isinstance(found.get("arrays"), dict):
        raise ValueError("its header is not one memfuse writes")
    start, data = padded(at + length), found.get("data")
    if isinstance(data, int) and data > data_most:  # read through for a digest: a sparse file
        raise ValueError(f"it says {data} bytes of data, past the {data_most} it may hold")
    if not isinstance(data, int) or start + data != len(mapped):
        raise ValueError(f"it is {len(mapped)} bytes, not the {data} past its header it says")
    return found, start


def arrays(found: dict[str, Any], mapped: mmap.mmap, start: int) -> dict[str, Any]:
    """Read-only numpy views of the file's arrays, each checked to lie inside the file."""
    import numpy as np

    out: dict[str, Any] = {}
    for name, spec in found["arrays"].items():
        dtype, shape, offset, nbytes = spec
        if dtype not in DTYPES or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise ValueError(f"its array {name!r} is not one memfuse writes")
        count = math.prod(shape)  # Python's ints: numpy's int64 overflows on a planted shape
        if count * np.dtype(dtype).itemsize != nbytes or offset < 0 or offset % ALIGN:
            raise ValueError(f"its array {name!r} does not add up")
        if start + offset + nbytes > len(mapped):
            raise ValueError(f"its array {name!r} runs past the end of the file")
        view = np.frombuffer(mapped, dtype=dtype, count=count, offset=start + offset)
        out[name] = view.reshape(shape)
    return out


def padded(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def chunk(array: Any) -> tuple[memoryview, bytes]:
    """An array's bytes as the file holds them (not copied), and the padding to the next page."""
    import numpy as np

    flat: Any = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    data = memoryview(flat)
    return data, bytes(padded(len(data)) - len(data))


def sweep(folder: StateFolder, ours: Callable[[str], bool]) -> None:
    """Delete the entries `ours` names but a temp file written in the last STALE seconds (a
    writer killed mid-write, SIGTERM running no `finally`, leaves one as large as the file)."""
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(folder.fd) as entries:
        for entry in (e for e in entries if ours(e.name)):
            with contextlib.suppress(OSError):
                fresh = now - entry.stat(follow_symlinks=False).st_mtime <= STALE
                if not (entry.name.endswith(".tmp") and fresh):
                    os.unlink(entry.name, dir_fd=folder.fd)
