"""The URI memfuse gave each stored memory, for recall's results, as a long-lived process asks.

The book keeps what it read, and the ledger's own stamp says when that may be stale, so a
question opens the ledger only after a sync wrote it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from memfuse.ledger.reader import uris_of
from memfuse.state.folder import StateFolder

KEPT_MAX = 20_000  # memory ids the book remembers (with or without a URI) before it starts again

LedgerStamp = tuple[tuple[int, int, int] | None, ...]


class UriBook:
    """memory id → URI (None: the ledger holds none for it), read through `uris_of`."""

    def __init__(self, state: StateFolder) -> None:
        self.state = state
        self._known: dict[str, str | None] = {}
        self._stamp: LedgerStamp | None = None

    def __call__(self, memory_ids: Iterable[str]) -> dict[str, str]:
        """The URIs of these memories that the ledger holds (LedgerError when it cannot be
        read: nothing is kept from that question)."""
        wanted = set(memory_ids)
        stamp = self._ledger_stamp()
        if stamp != self._stamp or len(self._known) > KEPT_MAX:
            self._known.clear()
            self._stamp = stamp
        missing = wanted - self._known.keys()
        if missing:
            found = uris_of(self.state, missing)
            self._known.update({m: found.get(m) for m in missing})
        return {m: uri for m in wanted if (uri := self._known[m]) is not None}

    def _ledger_stamp(self) -> LedgerStamp:
        """The inode, size and time of the ledger and its write-ahead log (not the ctime, nor
        an empty log: a reader touches or makes one); None for a file that is not there."""
        if not self.state.exists():
            return (None, None)
        stamps: list[tuple[int, int, int] | None] = []
        for name in (self.state.LEDGER, f"{self.state.LEDGER}-wal"):
            try:
                info = os.stat(name, dir_fd=self.state.fd, follow_symlinks=False)
            except FileNotFoundError:
                stamps.append(None)
                continue
            empty = info.st_size == 0 and name != self.state.LEDGER
            stamps.append(None if empty else (info.st_ino, info.st_size, info.st_mtime_ns))
        return tuple(stamps)
