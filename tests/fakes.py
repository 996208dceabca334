"""A fake world for in-process flow tests: a scripted, recording gateway and reranker.

`FakeGateway` answers from the reference server's own store, in this process (no mcporter, no
subprocess), so a flow test sees agent-memory 2.2's real semantics in milliseconds. A script
makes chosen calls fail the way a transport does (`down`, `fail_tool`, `answer_text`), and
every call is recorded for assertions. `World` runs commands with typer's CliRunner, handing
both fakes to the run as the command line's object (memfuse.run.runner.given_seams).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from memfuse.recall.reranker import Ranking, RerankClient, RerankError, Scored
from memfuse.refserver.store import Store, default_caps
from memfuse.refserver.tools import call_tool, tool_list
from memfuse.run.context import Seams
from memfuse.schedule.base import ToolRunner, run_tool
from memfuse.settings import RerankSettings, Settings
from memfuse.store.gateway.base import (
    Answer,
    CallFailed,
    CallTimeout,
    GatewayError,
    ToolMissing,
    parse_answer,
)

FAILURES: dict[str, type[GatewayError]] = {
    "missing": ToolMissing,
    "timeout": CallTimeout,
    "failed": CallFailed,
}


class Clock:
    """The store's clock; tests move it forward."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now or datetime(2026, 11, 29, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def direct_call(store: Store, tool: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """One tool of the reference store, run in this process; its JSON answer, parsed."""
    result = call_tool(store, tool, dict(arguments or {}))
    value: dict[str, Any] = json.loads(result["content"][0]["text"])
    return value


@dataclass
class FakeGateway:
    """An in-process agent-memory: the reference store behind a scriptable transport."""

    db_path: Path
    clock: Clock = field(default_factory=Clock)
    name: str = "fake"
    costly_listing: bool = False
    gate: bool = True
    down: str | None = None  # "missing" | "timeout" | "failed": every call fails so
    failing: dict[str, str] = field(default_factory=dict)  # tool -> failure kind
    texts: dict[str, str] = field(default_factory=dict)  # tool -> raw answer text
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    hook: Callable[[str, Mapping[str, Any]], None] | None = None
    tools: list[str] | None = None
    closed: int = 0
    generation: int = 2  # which agent-memory the reference store answers as (2..5)
    caps: dict[str, int | None] | None = None  # 4.x/5.x capacity limits; None: the defaults
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def store(self) -> Store:
        """The reference store, opened for one call; `call` and `direct` take `lock` around
        it, so the concurrent `remember` calls of a sync cannot race on the file."""
        return Store(
            str(self.db_path), "default", self.clock, gate=self.gate,
            generation=self.generation,
            caps=self.caps if self.caps is not None else default_caps(self.generation),
        )  # fmt: skip

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        self.calls.append((tool, dict(arguments)))
        if self.hook is not None:
            self.hook(tool, arguments)
        kind = self.down or self.failing.get(tool)
        if kind is not None:
            raise FAILURES[kind](f"{tool}: injected {kind}")
        if tool in self.texts:
            return parse_answer(tool, self.texts[tool])
        with self.lock:
            store = self.store
            try:
                result = call_tool(store, tool, arguments)
            finally:
                store.db.close()
        text = "\n".join(item["text"] for item in result["content"])
        if result.get("isError"):
            raise CallFailed(f"{tool} failed: {text[:300]}")
        return parse_answer(tool, text)

    def version(self) -> None:
        """No bridge."""

    def list_tools(self) -> list[str]:
        if self.down is not None:
            raise FAILURES[self.down]("tools/list: injected")
        if self.tools is not None:
            return self.tools
        return [t["name"] for t in tool_list(self.generation)]

    def close(self) -> None:
        self.closed += 1

    def direct(self, tool: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Arrange or inspect the store without recording a call."""
        with self.lock:
            store = self.store
            try:
                return direct_call(store, tool, arguments)
            finally:
                store.db.close()

    def count(self, tool: str) -> int:
        return sum(1 for name, _ in self.calls if name == tool)

    def journal_uris(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for prefix in ("event://journal/", "knowledge://journal/", "emotion://journal/"):
            listing = self.direct("recall_path", {"uri": prefix})
            found.update({m["uri"]: m["content"] for m in listing.get("memories", [])})
        return found


@dataclass
class FakeReranker:
    """A scripted reranker: scores by a function of (query, document), or fails."""

    settings: RerankSettings
    score: Callable[[str, str], float] = lambda q, d: float(len(set(q.split()) & set(d.split())))
    error: str | None = None
    requests: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    endpoint: str = "http://127.0.0.1:9/rerank"

    def rerank(self, query: str, documents: Any, top_n: int | None = None) -> Ranking:
        docs = tuple(documents)
        if not docs:
            return Ranking((), 0)
        self.requests.append((query, docs))
        if self.error is not None:
            raise RerankError(self.error)
        scored = [Scored(i, self.score(query, d), d) for i, d in enumerate(docs)]
        ranked = tuple(sorted(scored, key=lambda s: (-s.score, s.index)))
        return Ranking(ranked[:top_n] if top_n else ranked, 3)

    def close(self) -> None:
        """Nothing to release."""


class FakeEmbedder:
    """A deterministic model of meaning: each word (a CJK character alone) hashed to a signed
    dimension, after `synonyms` has put one word for another, so a test can say what "means"
    what. Every text it embeds is recorded; `fail` makes it raise like a broken model."""

    def __init__(
        self, name: str = "fake-embedder 1", synonyms: Mapping[str, str] | None = None
    ) -> None:
        self.name = name
        self.synonyms = dict(synonyms or {})
        self.embedded: list[str] = []
        self.asked: list[str] = []
        self.fail: str | None = None

    def embed(self, texts: Any, *, question: bool = False) -> Any:
        import hashlib
        import re

        import numpy as np

        from memfuse.recall.semantic import quantize

        if self.fail is not None:
            raise RuntimeError(self.fail)
        (self.asked if question else self.embedded).extend(texts)
        rows = np.zeros((len(texts), 64), dtype=np.float32)
        for n, text in enumerate(texts):
            for found in re.findall(r"[\u4e00-\u9fff]|[a-z0-9]+", text.casefold()):
                word = self.synonyms.get(found, found)
                h = hashlib.blake2b(word.encode(), digest_size=4).digest()
                rows[n, h[0] % 64] += 1.0 if h[1] & 1 else -1.0
            rows[n, 63] += 0.01  # never all zero
        return quantize(rows)


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    @property
    def envelope(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.stdout)
        return value

    @property
    def data(self) -> dict[str, Any]:
        value: dict[str, Any] = self.envelope["data"]
        return value

    @property
    def warnings_text(self) -> str:
        return "\n".join(self.envelope["warnings"])


@dataclass
class World:
    """A workspace, a fake store and a fake reranker, and a way to run memfuse on them."""

    workspace: Path
    gateway: FakeGateway
    reranker: FakeReranker | None = None
    opened: list[Settings] = field(default_factory=list)
    real_reranker: bool = False  # the real rerank client (HTTP), not FakeReranker
    embedder: Any = None  # recall's model of meaning: none unless a test hands one in
    tool: ToolRunner = run_tool  # a scheduler's programs: real processes unless a test hands in one

    @property
    def seams(self) -> Seams:
        """The outside world of each run: the fake store, and the fake or real reranker."""
        rerank = RerankClient if self.real_reranker else self.rerank_factory
        return Seams(
            gateway_factory=self.gateway_factory,
            rerank_factory=rerank,
            embedder_factory=lambda: self.embedder,
            tool=self.tool,
        )

    def gateway_factory(
        self, settings: Settings, _server: object = None, _server_log: object = None
    ) -> tuple[FakeGateway, str]:
        self.opened.append(settings)
        return self.gateway, "the scripted fake"

    def rerank_factory(self, settings: RerankSettings) -> FakeReranker:
        if self.reranker is None:
            self.reranker = FakeReranker(settings)
        self.reranker.settings = settings
        return self.reranker

    @property
    def state(self) -> Path:
        """memfuse's state folder for this workspace (outside it, in the test's own HOME)."""
        return state_of(self.workspace)

    def journal(self, day: str, text: str) -> Path:
        path = self.workspace / "memory" / f"{day}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def run(
        self, *args: str, env: Mapping[str, str] | None = None, stdin: str | None = None
    ) -> Outcome:
        from memfuse.cli import app

        argv = [*args, "-w", str(self.workspace)]
        result = CliRunner().invoke(
            app, argv, input=stdin, env=dict(env or {}), catch_exceptions=False, obj=self.seams
        )
        return Outcome(result.exit_code, result.stdout, result.stderr)

    def json(self, *args: str, env: Mapping[str, str] | None = None) -> Outcome:
        return self.run(*args, "--json", env=env)


def state_of(workspace: Path) -> Path:
    """Where memfuse keeps a workspace's state, as a run in this environment resolves it."""
    import os

    from memfuse.state.folder import default_state_dir

    return default_state_dir(workspace, os.environ)


def digest(tree: Path) -> str:
    """A digest of a folder tree (names, bytes, mtimes): equal means nothing in it changed."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted(tree.rglob("*")):
        h.update(str(path.relative_to(tree)).encode())
        if path.is_file() and not path.is_symlink():
            h.update(path.read_bytes())
            h.update(str(path.stat().st_mtime_ns).encode())
    return h.hexdigest()
