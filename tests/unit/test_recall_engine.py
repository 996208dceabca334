"""The recall engine stands on its own: it is handed its services (no run context, no command),
serve asks it directly, and opening its index crosses into the state folder once."""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from memfuse.errors import MemfuseError
from memfuse.recall import engine
from memfuse.recall.index import RecallIndex
from memfuse.recall.reranking import Reranking
from memfuse.report import Reporter
from memfuse.settings import RerankSettings
from memfuse.state.folder import StateFolder
from memfuse.store.answers import StoredMemory

SRC = Path(engine.__file__).resolve().parents[1]
NOW = datetime.fromisoformat("2026-11-29T22:00:00+00:00")


def imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }


def test_serve_asks_the_engine_not_the_recall_command() -> None:
    names = imported(SRC / "commands" / "serve.py")
    assert "memfuse.recall.engine" in names
    assert not {n for n in names if n.startswith("memfuse.commands.recall")}


def test_the_engine_knows_no_command_context_or_ledger() -> None:
    for name in ("engine.py", "index.py", "rows.py"):
        names = imported(SRC / "recall" / name)
        bad = {
            n for n in names if n.startswith(("memfuse.run", "memfuse.commands", "memfuse.ledger"))
        }
        assert not bad, f"{name} imports {bad}"


def test_the_recall_command_is_thin() -> None:
    assert len((SRC / "commands" / "recall.py").read_text().splitlines()) <= 150


def test_opening_the_index_crosses_into_the_state_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 41: opening the index went back and forth between the folder and the SQLite
    helper 8 times (ensure, a name, four checks, an open, a path)."""
    RecallIndex(StateFolder(tmp_path / "state")).close()
    calls: list[str] = []
    folder_file = inspect.getfile(StateFolder)
    for name, member in list(vars(StateFolder).items()):
        if not callable(member) or name.startswith("__"):
            continue

        def counted(
            *args: Any, _name: str = name, _real: Callable[..., Any] = member, **kw: Any
        ) -> Any:
            caller = inspect.stack()[1].filename
            if caller != folder_file:
                calls.append(_name)
            return _real(*args, **kw)

        monkeypatch.setattr(StateFolder, name, functools.wraps(member)(counted))
    RecallIndex(StateFolder(tmp_path / "state")).close()
    assert calls == ["database"]


class NoReranker:
    def __init__(self, _settings: RerankSettings) -> None:
        raise AssertionError("no reranker is configured")


def services(
    store: engine.StoreRecall, uris: engine.UriLookup, warnings: list[str]
) -> engine.RecallServices:
    reporter = Reporter()
    reranking = Reranking(RerankSettings(), NoReranker, reporter, NOW)  # type: ignore[arg-type]
    return engine.RecallServices(store, None, reranking, uris, warnings.append, NOW)


def test_the_engine_answers_from_the_services_it_is_handed() -> None:
    memory = StoredMemory(id="m1", content="Alice prefers dark mode", type="identity")
    warnings: list[str] = []

    def unreadable(_ids: set[str]) -> dict[str, str]:
        raise MemfuseError("the sync ledger cannot be read")

    answer = engine.ask(
        services(lambda _q, _n: [memory], unreadable, warnings), engine.RecallRequest("dark mode")
    )
    assert [r["content"] for r in answer["results"]] == ["Alice prefers dark mode"]
    assert answer["sources"] == ["agent-memory"] and answer["results"][0]["uri"] is None
    assert warnings == [
        "the sync ledger cannot be read; recall's results carry only the store's own URIs"
    ]
    warnings.clear()
    known = services(lambda _q, _n: None, lambda ids: {"m1": "identity://x"}, warnings)
    assert engine.ask(known, engine.RecallRequest("dark mode"))["results"] == []
    assert warnings == [engine.STORE_DOWN]


def test_a_question_without_the_store_never_opens_it() -> None:
    def never(_q: str, _n: int) -> list[StoredMemory] | None:
        raise AssertionError("the store was asked")

    request = engine.RecallRequest("dark mode", without=frozenset({"store"}))
    assert engine.ask(services(never, lambda ids: {}, []), request)["sources"] == []
