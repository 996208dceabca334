"""An index that cannot be opened even after the one there was set aside is a RecallIndexError
(a MemfuseError, which recall and serve turn into a warning) naming the index's file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memfuse.errors import MemfuseError
from memfuse.recall.index import RecallIndex, RecallIndexError
from memfuse.state.folder import StateFolder


def test_an_index_unusable_twice_is_a_recall_index_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_state: StateFolder) -> sqlite3.Connection:
        raise sqlite3.DatabaseError("file is not a database")

    monkeypatch.setattr(RecallIndex, "_open", staticmethod(broken))
    state = StateFolder(tmp_path / "state")
    with pytest.raises(RecallIndexError) as raised:
        RecallIndex(state)
    assert isinstance(raised.value, MemfuseError)
    assert str(raised.value) == (
        f"the recall index {state.recall_index} cannot be used (file is not a database)"
    )
