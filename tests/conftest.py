"""Shared fixtures. Tests never touch the real home, workspace or network."""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import pytest

ROOT = Path(__file__).resolve().parent.parent
FAULT_SERVER = Path(__file__).resolve().parent / "fault_server.py"


def _in_memory(folder: Path = Path("/dev/shm"), room: int = 1 << 30) -> None:
    """Keep the suite's temporary files in a tmpfs where the machine has one with room.

    memfuse fsyncs each state database it creates and each atomic write; on this machine's disk
    those waits were most of the unit tier's wall time (three flow files: 37.6 s on disk, 11.0 s
    in memory, the same CPU; docs/decisions.md 415). No test checks durability against a power
    cut: a SIGKILL, the crash the suite makes, loses nothing the page cache holds. A `noexec`
    mount (Docker's /dev/shm) is passed over: the flows run programs they write there."""
    if "PYTEST_DEBUG_TEMPROOT" in os.environ or not os.access(folder, os.W_OK):
        return
    stats = os.statvfs(folder)
    if stats.f_flag & getattr(os, "ST_NOEXEC", 0):
        return
    if stats.f_bavail * stats.f_frsize >= room:
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(folder)


_in_memory()

# How thorough a run is: a developer's own loop (`pytest tests/unit`) tries a quarter of each
# property's examples, CI and scripts/test.sh (MEMFUSE_TEST_THOROUGH=1, or CI=true) every one
# (docs/decisions.md 550). A seeded property in the loop tries a prefix of what CI tries.
THOROUGH = os.environ.get("MEMFUSE_TEST_THOROUGH") == "1" or os.environ.get("CI") == "true"
hypothesis.settings.register_profile("thorough")
hypothesis.settings.register_profile("quick", max_examples=25)
# CI draws the same examples every run, so a landing never hangs on a draw: the exploring is
# done in the developer's loop and scripts/test.sh, which draw afresh each time.
hypothesis.settings.register_profile("ci", derandomize=True, database=None)
_PROFILE = "ci" if os.environ.get("CI") == "true" else "thorough" if THOROUGH else "quick"
hypothesis.settings.load_profile(_PROFILE)


def examples(count: int) -> int:
    """How many of a property's `count` examples this run tries (all of them in CI)."""
    return count if THOROUGH else max(10, count // 4)


# What `st.text()` draws by default (every code point but a surrogate), drawn without its
# default's one cost: `characters(codec="utf-8")` has Hypothesis encode and decode each of the
# 1.1 M code points once per `.hypothesis/` folder (~1.3 s of CPU, 3-4 s on a loaded machine),
# paid by the first test to draw text in a fresh checkout or worktree: CI's every run.
ANY_CHARACTER = hypothesis.strategies.characters(exclude_categories=("Cs",))


# Texts a tokenizer finds hard (it reads no table row for them): every script, odd spaces, the
# tokenizer's own markers, a long run, nothing at all. The model cache's unit and integration
# tests both try them.
ODD_TEXTS = [
    "周五前把季度报告发给财务部",
    "こんにちは世界、今日はいい天気ですね",
    "안녕하세요, 반갑습니다",
    "Привет, как дела? Всё хорошо.",
    "مرحبا بالعالم",
    "Ça va ? Größe, Straße, ﬁn ligature, e\u0301 combining",
    "emoji 🎉🎉 party 👩\u200d👩\u200d👧 ok 😀😀😀",
    "  odd\t\twhitespace \n\n here  \u3000全角　スペース ＡＢＣ１２３",
    "\u200b\u200d zero width and a\x00nul",
    "<s> </s> <unk> extra_token_id_1",
    "a" * 300,
    "",
    " ",
]


def _build_each_app_once() -> None:
    """Build the click command of a typer app once, not at each `CliRunner.invoke`: a build
    reads every option of every subcommand (~5 ms), and the unit tier invokes ~1 000 times.
    click reuses one command across invocations (its own tests do); typer's runner rebuilds
    only because it takes the app."""
    import typer.main
    import typer.testing

    typer.testing._get_command = functools.cache(typer.main.get_command)


_build_each_app_once()


@pytest.fixture(scope="session")
def model_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the whole run: the model's cache file (80 MB) is made once, not
    in every test's HOME (the tests of the cache itself point XDG_CACHE_HOME elsewhere)."""
    return tmp_path_factory.mktemp("cache")


# The opt-in tests' knobs as docs/operations.md names them (the real OpenClaw's CLI).
OPT_IN = {"MEMFUSE_OPENCLAW"}


@pytest.fixture(autouse=True)
def isolated_env(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    model_cache_home: Path,
) -> Path:
    """A private HOME, and none of the operator's memfuse/rerank/OpenAI variables."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(model_cache_home))
    for name in list(os.environ):
        if name.startswith("MEMFUSE_TEST_") or name in OPT_IN:
            continue  # the suite's own knobs (MEMFUSE_TEST_MCPORTER), not an operator's setting
        if name.startswith(("MEMFUSE_", "AGENT_MEMORY_", "OPENAI_", "MCPORTER_")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    return home


def mcporter_command() -> str:
    """The real mcporter: $MEMFUSE_TEST_MCPORTER, or the one `npm ci` put under tools/."""
    explicit = os.environ.get("MEMFUSE_TEST_MCPORTER")
    if explicit:
        return explicit
    cli = ROOT / "tools" / "node_modules" / "mcporter" / "dist" / "cli.js"
    node = shutil.which("node")
    if not cli.is_file() or node is None:
        pytest.fail(
            "mcporter is not installed: run `npm ci --prefix tools` (the .ci/run script does)"
        )
    return f"{node} {cli}"


# A timeout a test does not exercise: where the code needs one but the test expects an answer,
# this keeps it out of play, so that no machine is slow enough to race it (docs/reliability.md).
# A test whose subject is a timeout sets a short one against a fault that never answers.
UNREACHED = 3600.0


@dataclass
class StoreServer:
    """A reference (or fault-injecting) server on a temp SQLite file, reached via mcporter."""

    root: Path
    mcporter: str
    env: dict[str, str] = field(default_factory=dict)
    mode: str = "ok"

    @property
    def db(self) -> Path:
        return self.root / "agent-memory.db"

    @property
    def config(self) -> Path:
        return self.root / "mcporter.json"

    def write_config(self, server: str = "agent-memory", **extra_env: str) -> Path:
        """(Re)write the mcporter config; fault mode and clock come from `env`."""
        env = {
            "AGENT_MEMORY_DB": str(self.db),
            "FAULT_COUNTER": str(self.root / "calls"),
            **self.env,
            **extra_env,
        }
        if self.mode == "ok":
            args = ["-m", "memfuse.refserver"]
        else:
            env["FAULT_MODE"] = self.mode
            args = [str(FAULT_SERVER)]
        entry = {"command": sys.executable, "args": args, "env": env}
        self.config.write_text(json.dumps({"mcpServers": {server: entry}, "imports": []}))
        return self.config

    def set_mode(self, mode: str, **env: str) -> None:
        self.mode = mode
        self.env.update(env)
        self.write_config()

    def gateway(self, timeout: float = UNREACHED) -> Any:
        from memfuse.store.gateway import McporterGateway

        return McporterGateway(self.mcporter, "agent-memory", config=self.config, timeout=timeout)

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A direct store call, for arranging and checking state."""
        return self.gateway().call(tool, arguments or {}).require_object()  # type: ignore[no-any-return]

    def direct(self, tool: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Arrange or inspect the store in this process, on the server's own database and
        settings (no transport, no call counted): for checks where the transport is not the
        point. The answer is the server's JSON text, parsed."""
        from memfuse.refserver.server import store_from_env
        from tests.fakes import direct_call

        env = {"AGENT_MEMORY_DB": str(self.db), **self.env}
        return direct_call(store_from_env(env), tool, arguments)

    def tool_calls(self) -> int:
        counter = self.root / "calls"
        return int(counter.read_text() or 0) if counter.exists() else 0

    def starts(self) -> int:
        """How many times the fault wrapper started (one per mcporter call)."""
        counter = self.root / "calls.starts"
        return int(counter.read_text() or 0) if counter.exists() else 0

    def cli_args(self, transport: str = "session") -> list[str]:
        """Flags for a run against this server: one MCP session per run unless a test asks
        for mcporter, so the real mcporter runs where it is the point (argv and stdin, the
        fault matrix, crash trials, the generations) and nowhere else pays ~0.5 s a call."""
        return [
            "--mcporter", self.mcporter, "--mcporter-config", str(self.config),
            "--transport", transport,
        ]  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> StoreServer:
    root = tmp_path / "store"
    root.mkdir()
    server = StoreServer(root=root, mcporter=mcporter_command())
    server.write_config()
    return server


@pytest.fixture
def counted_store(store: StoreServer) -> StoreServer:
    """The reference server behind the fault wrapper in `ok` mode, which counts tool calls."""
    store.set_mode("ok-counted")
    return store


@pytest.fixture
def decoy(tmp_path: Path) -> Path:
    """A tree outside the workspace that links from it try to reach; see fakes.digest."""
    tree = tmp_path / "decoy"
    (tree / "sub").mkdir(parents=True)
    (tree / ".bashrc").write_text("export PATH=/usr/bin\n")
    (tree / "sub" / "notes.md").write_text("- private\n")
    return tree


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "memory").mkdir(parents=True)
    return ws


FAULT_MATRIX: dict[tuple[str, str], str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the fault matrix's cells, which tests report as a user property (xdist-safe)."""
    for name, value in report.user_properties:
        if name == "fault_matrix":
            command, fault, verdict = value  # type: ignore[misc]
            FAULT_MATRIX[(command, fault)] = verdict


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the fault matrix (command × fault → survived/lost) when it ran."""
    from tests.integration.test_fault_matrix import COMMANDS, FAULTS

    if not FAULT_MATRIX:
        return
    write = terminalreporter.write_line
    write("")
    write("fault matrix (command × fault → survived / lost)")
    width = max(len(f.name) for f in FAULTS)
    write(f"  {'fault':<{width}}  " + "  ".join(f"{c:<8}" for c in COMMANDS))
    for fault in FAULTS:
        cells = [FAULT_MATRIX.get((c, fault.name), "-") for c in COMMANDS]
        write(f"  {fault.name:<{width}}  " + "  ".join(f"{cell:<8}" for cell in cells))


@pytest.fixture
def dry_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """`cron --check`'s dry run of each job, recorded and not run (its argv, in order): for a
    test whose point is which jobs a check finds and how it reads them, not what a run says.
    Each run is a memfuse process, and a store's, ~0.4 s of CPU; real runs stay where the run
    is the point (test_cron_flow's clean schedule, missing config and program only named
    memfuse)."""
    from memfuse.schedule import check

    ran: list[list[str]] = []

    def record(argv: list[str], _env: Mapping[str, str], _timeout: float, _home: Path) -> list[str]:
        ran.append(list(argv))
        return []

    monkeypatch.setattr(check, "_dry_run", record)
    return ran


@pytest.fixture
def world(tmp_path: Path) -> Any:
    """A workspace and an in-process fake store, handed to each run the World makes
    (tests/fakes.py)."""
    from tests.fakes import FakeGateway, World

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    return World(ws, FakeGateway(tmp_path / "fake-store.db"))
