"""A note the kernel refuses part of (issue 46): a real process whose file-size limit
(RLIMIT_FSIZE) stops the journal a few bytes into the note — the kernel writes up to the
limit, then fails the rest (EFBIG), as a full filesystem does with ENOSPC — and the journal
is byte for byte what it was. No mount and no root: the limit is the process's own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import UNREACHED

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as Linux applies it"),
]

NOTE = """
import resource, sys
from datetime import datetime, timezone
from pathlib import Path
from memfuse.workspace.layout import Workspace
from memfuse.workspace.note import NoteRefused, append_note

ws, state = Path(sys.argv[1]), Path(sys.argv[2])
journal = ws / "memory" / "2026-11-29.md"
limit = journal.stat().st_size + 9  # the note's first 9 bytes fit, the rest does not
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    append_note(Workspace(ws, state), "Storm note 0648 the vendor budget is final",
                datetime(2026, 11, 29, 22, 5, tzinfo=timezone.utc))
except NoteRefused as exc:
    print("refused:", exc)
else:
    print("written")
"""


def test_a_note_cut_short_by_the_kernel_leaves_the_journal_as_it_was(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    journal = ws / "memory" / "2026-11-29.md"
    journal.write_text("# Journal\n\n## 22:00\n- Before the storm\n")
    before = journal.read_bytes()
    done = subprocess.run([sys.executable, "-c", NOTE, str(ws), str(tmp_path / "state")],
                          capture_output=True, text=True, timeout=UNREACHED, check=True)  # fmt: skip
    assert done.stdout.startswith("refused:") and "File too large" in done.stdout, done.stdout
    assert "nothing written" in done.stdout
    assert journal.read_bytes() == before
