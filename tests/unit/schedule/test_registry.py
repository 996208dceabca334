"""A scheduler is one module and one registry line (issue 41): the registry refuses one that
lacks part of the protocol, `--format` and the docs come from it, and a scheduler's name lives
in its own module and the registry alone."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from memfuse.schedule import registry
from memfuse.schedule.base import InstallOutcome, Machine, Scheduler
from memfuse.schedule.runs import Job, Schedule
from tests.conftest import ROOT
from tests.fakes import World

SRC = ROOT / "src" / "memfuse"

# OpenClaw is also the agent runtime whose workspace memfuse syncs by default: these files name
# the host, not the scheduler, each for a reason of its own (docs/decisions.md, 200).
HOST_FILES = {
    "host.py": "the host's folders (its workspace, agent-memory's database beside it) and the"
    " markers of the dreaming blocks it writes into a journal",
}


def test_every_builtin_is_complete_and_the_first_is_the_default() -> None:
    assert registry.names() == ("crontab", "systemd", "launchd", "openclaw")
    assert registry.default() == "crontab"
    for module in registry.BUILTIN:
        scheduler = importlib.import_module(module).SCHEDULER
        assert module.rsplit(".", 1)[1] == scheduler.name
        assert registry.get(scheduler.name) is scheduler
        assert scheduler.summary and scheduler.source_help
        assert scheduler.routes or scheduler.name == "launchd"  # macOS's alone


class Half(Scheduler):
    name = "half"
    summary = "a scheduler without an installer"
    source_help = "nothing"

    def render(self, schedule: Schedule, machine: Machine) -> dict[str, str]:
        return {}

    def remove(self, schedule: Schedule, files: dict[str, str], machine: Machine) -> list[str]:
        return []

    def read(self, files: dict[str, str]) -> list[Job]:
        return []

    def available(self, machine: Machine) -> bool:
        return False


class Whole(Half):
    def install(
        self, schedule: Schedule, files: dict[str, str], machine: Machine
    ) -> InstallOutcome:
        return InstallOutcome(schedule)


def test_an_incomplete_entry_is_refused_when_it_registers() -> None:
    with pytest.raises(TypeError):  # an abstract method left: it cannot even be made
        Half()  # type: ignore[abstract]
    unnamed = Whole()
    unnamed.summary = ""
    with pytest.raises(registry.IncompleteScheduler, match="summary"):
        registry.register(unnamed)
    with pytest.raises(registry.IncompleteScheduler):
        registry.register(object())  # type: ignore[arg-type]
    assert "half" not in registry.names()


def test_format_choices_and_help_come_from_the_registry() -> None:
    out = CliRunner().invoke(app, ["cron", "--help"], env={"COLUMNS": "200"})
    said = " ".join(out.stdout.split())
    for scheduler in registry.every():
        assert f"{scheduler.name} ({scheduler.summary})" in said
        assert scheduler.source_help in said
    bad = CliRunner().invoke(app, ["cron", "--format", "k8s"])
    assert bad.exit_code == 2
    assert ", ".join(registry.names()) in bad.output


def test_the_docs_name_every_scheduler() -> None:
    ops = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    listed = re.search(r"memfuse cron \[--format ([a-z|]+)\]", ops)
    assert listed is not None and listed[1].split("|") == list(registry.names())
    for scheduler in registry.every():
        assert re.search(rf"^\| `{scheduler.name}`", ops, re.M), scheduler.name


def _naming(word: str) -> set[str]:
    return {
        p.relative_to(SRC).as_posix()
        for p in SRC.rglob("*.py")
        if word.lower() in p.read_text(encoding="utf-8").lower()
    }


def test_a_schedulers_name_lives_in_its_module_and_the_registry() -> None:
    for scheduler in registry.every():
        module = importlib.import_module(type(scheduler).__module__)
        home = Path(str(module.__file__)).relative_to(SRC).as_posix()
        own = home.rsplit("/", 1)[0] + "/" if home.endswith("__init__.py") else home
        found = {f for f in _naming(scheduler.name) if not f.startswith(own)}
        found -= {"schedule/registry.py"}
        if scheduler.name == "openclaw":
            found -= set(HOST_FILES)
        assert not found, f"{scheduler.name} is named outside its module: {sorted(found)}"


class K8s(Whole):
    name = "k8s"
    summary = "a CronJob per run"
    source_help = "a CronJob manifest"


class Shadow(Whole):
    name = "crontab"
    summary = "another package's crontab"
    source_help = "anything"


K8S, SHADOW, HALF_DONE = K8s(), Shadow(), Whole()
HALF_DONE.name = "half-done"
HALF_DONE.source_help = ""


def test_another_packages_scheduler_registers_through_an_entry_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 48: the built-ins and another package's schedulers go through one `register`."""
    from importlib.metadata import EntryPoint

    installed = {
        "k8s": f"{__name__}:K8S", "shadow": f"{__name__}:SHADOW",
        "half": f"{__name__}:HALF_DONE",
    }  # fmt: skip
    points = [EntryPoint(name, value, registry.GROUP) for name, value in installed.items()]

    def found(group: str) -> list[EntryPoint]:
        return points if group == registry.GROUP else []

    monkeypatch.setattr(registry, "entry_points", found)
    monkeypatch.setattr(registry, "_REGISTERED", {})
    monkeypatch.setattr(registry, "_REFUSED", {})
    assert registry.names() == ("crontab", "systemd", "launchd", "openclaw", "k8s")
    assert registry.get("k8s") is K8S
    assert registry.get("crontab") is not SHADOW  # a built-in's name stays the built-in's
    assert registry.default() == "crontab"
    with pytest.raises(KeyError, match=r"'half' did not load .*source_help"):
        registry.get("half")  # the incomplete one: set aside, named when asked for


def test_a_plugin_that_fails_to_load_stops_no_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A scheduler plugin naming a module that is gone (review of issue 48): `status` and
    cron's `sync` died with a traceback before main ran, since the CLI reads `--format`'s
    choices at import. The plugin is set aside; every other command runs."""
    from importlib.metadata import EntryPoint

    from typer.testing import CliRunner

    from memfuse.cli import app

    points = [EntryPoint("gone", "memfuse_no_such_plugin:SCHEDULER", registry.GROUP)]
    monkeypatch.setattr(
        registry, "entry_points", lambda group: points if group == registry.GROUP else []
    )
    monkeypatch.setattr(registry, "_REGISTERED", {})
    monkeypatch.setattr(registry, "_REFUSED", {})
    assert registry.names() == ("crontab", "systemd", "launchd", "openclaw")
    with pytest.raises(KeyError, match=r"'gone' did not load .*ModuleNotFoundError"):
        registry.get("gone")
    result = CliRunner().invoke(app, ["cron", "--format", "crontab", "-w", str(tmp_path)])
    assert "Traceback" not in result.output
    assert result.exit_code == 0, result.output


class Hanging:
    """An entry point whose import never ends until the test lets it go."""

    name = "hangs"

    def __init__(self) -> None:
        import threading

        self.release = threading.Event()

    def load(self) -> Scheduler:
        self.release.wait()
        return K8S


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry loaded anew in this test, and loaded anew after it."""
    monkeypatch.setattr(registry, "_REGISTERED", {})
    monkeypatch.setattr(registry, "_REFUSED", {})


def test_a_plugin_that_calls_sys_exit_is_set_aside_named_by_doctor_and_recorded(
    fresh: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, world: World
) -> None:
    """Issue 55: `except Exception` let a plugin's `sys.exit` stop every command."""
    from importlib.metadata import EntryPoint

    (tmp_path / "memfuse_exits.py").write_text("import sys\nsys.exit(1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [EntryPoint("exits", "memfuse_exits:SCHEDULER", registry.GROUP)]
    monkeypatch.setattr(registry, "entry_points", lambda group: points)
    assert registry.names() == ("crontab", "systemd", "launchd", "openclaw")
    with pytest.raises(KeyError, match=r"'exits' did not load \(SystemExit: 1\)"):
        registry.get("exits")
    checks = {c["name"]: c for c in world.json("doctor").data["checks"]}
    assert "'exits' did not load (SystemExit: 1)" in checks["scheduler-plugin"]["detail"]
    synced = world.json("sync")
    assert synced.code == 0
    assert "the scheduler plugin 'exits' did not load" in synced.warnings_text


def test_an_unrelated_packages_broken_entry_points_stops_no_command(
    fresh: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 55: `entry_points()` itself raised outside the guard, before any command ran."""
    info = tmp_path / "broken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[console_scripts]\nthis line has no equals sign\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert registry.names() == ("crontab", "systemd", "launchd", "openclaw")
    assert any("(installed packages)" in why for why in registry.refused())
    result = CliRunner().invoke(app, ["cron", "--format", "crontab", "-w", str(tmp_path)])
    assert result.exit_code == 0, result.output


def test_a_hanging_plugin_import_is_set_aside_after_the_bound(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 55: a plugin whose import hangs stalled each command; the bound is injected
    (nothing here races it: the import never returns until the test is done)."""
    hanging = Hanging()
    monkeypatch.setattr(registry, "entry_points", lambda group: [hanging])
    monkeypatch.setattr(registry, "PLUGIN_WAIT", 0.01)
    try:
        assert registry.names() == ("crontab", "systemd", "launchd", "openclaw")
        assert registry.refused() == [
            "the scheduler plugin 'hangs' did not load (still loading after 0.01 s: set aside)"
        ]
    finally:
        hanging.release.set()
