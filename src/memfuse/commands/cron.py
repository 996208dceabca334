"""`memfuse cron`: the five scheduled runs, for the scheduler this machine uses.

One description (`RUNS`: sync at 14:00 and 22:00, surface five minutes after each, tidy at
03:00) becomes a schedule for this workspace (memfuse.schedule.Schedule: every program by its
absolute path, the settings in effect as flags, `-q`, nothing redirected) and is rendered as a
crontab block, systemd user timers (which catch up a run missed while the machine slept),
launchd agents or OpenClaw's own cron jobs (`--format`).

`--install` puts it in place without replacing what is there: the crontab gets memfuse's
marked block merged in (the previous crontab is kept in the state folder and the change shown
as a diff); unit and plist files are written only over files memfuse wrote itself; OpenClaw
jobs are replaced by name, memfuse's names only. `--remove` takes them out the same way. Each
install records the schedule in the state folder, which `memfuse status` checks runs against.

`--check [FILE]` reads a schedule (the one printed, or a file: a crontab, a unit or plist file
or folder of them, an OpenClaw jobs list) and tries each memfuse job: this memfuse, never the
job's program, with the operator's own environment and store settings, on the job's
subcommand and workspace, `--dry-run --json` added. What the job sets that would change the
program, its PATH, its configuration or its store is a finding (commands/cron_trial.py), never
used. A job fails the check on a finding, or when its run would fail or leave the store
unreachable.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Literal

from memfuse.commands import cron_openclaw, cron_trial, status
from memfuse.confine import UnsafePath, read_file, write_atomic
from memfuse.errors import ConfigError, ExitCode, MemfuseError
from memfuse.report import cause
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import CronCheckData, CronData, CronJobCheck
from memfuse.schedule import (
    Job,
    ParseError,
    Run,
    Schedule,
    ScheduleError,
    crontab,
    launchd,
    openclaw,
    systemd,
    writers,
)
from memfuse.settings import Settings
from memfuse.store.connect import choose_transport, find_server
from memfuse.store.server_entry import mcporter_config_path

Format = Literal["crontab", "systemd", "launchd", "openclaw"]
FORMATS: tuple[Format, ...] = ("crontab", "systemd", "launchd", "openclaw")
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
CHECK_TIMEOUT_FLOOR = 120.0
TOOL_TIMEOUT = 60.0  # crontab, systemctl, launchctl, openclaw: each call
LOCK_WAIT = 300  # seconds a scheduled run waits for another's workspace lock
SCHEDULE_FILE = status.SCHEDULE_FILE  # the installed schedule, which `status` checks runs against
LIFECYCLE = ("sync", "surface", "tidy")


@dataclass(frozen=True)
class Planned:
    """One of memfuse's scheduled commands: when, and why."""

    command: str
    times: tuple[tuple[int, int], ...]
    comment: str


# The one description every scheduler's files are rendered from.
RUNS = (
    Planned("sync", ((14, 0), (22, 0)), "14:00 and 22:00: journal bullets into agent-memory"),
    Planned("surface", ((14, 5), (22, 5)), "14:05 and 22:05: RECENT.md for the next sessions"),
    Planned("tidy", ((3, 0),), "03:00: the store's sleep cycle, MEMORY.md check and backup"),
)


def label_for(workspace: Path) -> str:
    """The name of this workspace's schedule: memfuse's own, and another workspace's never."""
    real = os.path.realpath(workspace)
    return "memfuse-" + hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:10]


def memfuse_command() -> list[str]:
    """This memfuse, by absolute path: the script next to this Python, else the one on PATH."""
    beside = Path(sys.executable).parent / "memfuse"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside.absolute())]
    found = shutil.which("memfuse")
    if found:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "memfuse"]


def build(
    settings: Settings,
    *,
    archive: bool = False,
    memfuse: list[str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> Schedule:
    """The schedule for these settings, on this machine."""
    notes: list[str] = []
    memfuse = memfuse or memfuse_command()
    mcporter = shlex.split(settings.mcporter) or ["mcporter"]
    found = which(mcporter[0])
    if found:
        mcporter[0] = str(Path(found).absolute())
    elif settings.transport == "mcporter":
        notes.append(f"{mcporter[0]!r} was not found on this PATH: install mcporter first")
    node = which("node")
    if node is None and settings.transport == "mcporter":
        notes.append("node was not found on this PATH: mcporter needs it")
    folders = [str(Path(p).parent) for p in (node, mcporter[0], memfuse[0]) if p and "/" in p]
    path = ":".join(dict.fromkeys([*folders, *SYSTEM_PATH]))

    defaults = {f.name: f.default for f in fields(Settings)}
    options = ["--workspace", str(settings.workspace), "--mcporter", shlex.join(mcporter)]
    if settings.state_dir is not None:
        # Named, not left to the environment: a scheduler's has no XDG_STATE_HOME.
        options += ["--state-dir", str(settings.state_dir)]
    if settings.mcporter_config is not None:
        options += ["--mcporter-config", str(settings.mcporter_config)]
    for name in ("server", "transport"):
        value = getattr(settings, name)
        if value != defaults[name]:
            options += [f"--{name}", str(value)]
    if settings.rerank.enabled:
        notes.append(
            "the reranker's key comes from the environment, which a scheduler does not have:"
            " add AGENT_MEMORY_RERANK_API_KEY to the schedule's environment, or recall runs"
            " without the reranker"
        )
    runs = []
    for planned in RUNS:
        extra = ["--archive"] if planned.command == "tidy" and archive else []
        comment = planned.comment + (", weekly roll-up" if extra else "")
        argv = (*memfuse, planned.command, "-q", "--wait", str(LOCK_WAIT), *extra, *options)
        runs.append(Run(planned.command, argv, planned.times, comment))
    env = (("SHELL", "/bin/sh"), ("PATH", path))
    return Schedule(tuple(runs), env, label_for(settings.workspace), tuple(notes))


def files_of(schedule: Schedule, fmt: Format, settings: Settings) -> dict[str, str]:
    """{file name: text} of the schedule in one format."""
    if fmt == "crontab":
        block = crontab.render(
            schedule,
            failed_runs=settings.alert_failed_runs,
            max_age_hours=settings.alert_max_age_hours,
        )
        return {"crontab": block}
    if fmt == "systemd":
        return systemd.render(schedule)
    if fmt == "launchd":
        out = str(settings.state_dir / "launchd.out") if settings.state_dir else None
        return launchd.render(schedule, output_path=out)
    return openclaw.render(schedule, payload="command")


def _printed(files: dict[str, str]) -> str:
    if list(files) == ["crontab"]:
        return files["crontab"].rstrip("\n")
    shown = "\n".join(f"# ==> {name} <==\n{text.rstrip()}\n" for name, text in files.items())
    return shown.rstrip("\n")


# --- where each scheduler keeps its files --------------------------------------------------


def _home() -> Path:
    """$HOME, as every other program of the user's session has it (under sudo -E, a
    container or a test, it is not the password file's); that only when HOME is unset."""
    return Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir)


def units_dir() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or str(_home() / ".config")
    return Path(config) / "systemd" / "user"


def agents_dir() -> Path:
    return _home() / "Library" / "LaunchAgents"


# --- the command ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    fmt: Format = "crontab"
    archive: bool = False
    install: bool = False
    remove: bool = False
    check: bool = False
    file: str | None = None


def run(ctx: RunContext, request: Request) -> CommandResult:
    s = ctx.settings
    try:
        schedule, _ = writers.clear_of(build(s, archive=request.archive), _busy(request))
        files = files_of(schedule, request.fmt, s)
    except ScheduleError as exc:
        raise ConfigError(f"no {request.fmt} schedule can run this: {exc}") from None
    if request.check:
        return _check(ctx, schedule, files, request)
    if request.install or request.remove:
        installer = Installer(ctx, schedule, request.fmt)
        done = installer.remove(files) if request.remove else installer.install(files)
        if installer.schedule != schedule:  # moved clear of another job's minute
            schedule = installer.schedule
            files = files_of(schedule, request.fmt, s)
        data: CronData = {
            "format": request.fmt, "label": schedule.label, "files": files,
            "text": _printed(files), "notes": list(schedule.notes), "changes": done,
        }  # fmt: skip
        return CommandResult("cron", data, tuple(render.cron_install(data)))
    data = {
        "format": request.fmt, "label": schedule.label, "files": files,
        "text": _printed(files), "notes": list(schedule.notes), "changes": [],
    }  # fmt: skip
    return CommandResult("cron", data, payload=data["text"])


def _busy(request: Request) -> cron_openclaw.Busy:
    """Jobs on this machine that rewrite MEMORY.md (OpenClaw's dreaming, from its config), for
    tidy to keep out of their minute; an OpenClaw install reads the Gateway's own job."""
    if request.fmt == "openclaw" and (request.install or request.remove):
        return []
    return cron_openclaw.dreaming(os.environ)


class Installer:
    """Put a schedule in place for one scheduler, or take it out, leaving the user's own
    entries as they were. Every change is said in `changes` (and a crontab's as a diff)."""

    def __init__(self, ctx: RunContext, schedule: Schedule, fmt: Format) -> None:
        self.ctx = ctx
        self.schedule = schedule
        self.fmt = fmt
        self.changes: list[str] = []

    def install(self, files: dict[str, str]) -> list[str]:
        getattr(self, f"_install_{self.fmt}")(files)
        self._record(installed=True)
        return self.changes

    def remove(self, files: dict[str, str]) -> list[str]:
        getattr(self, f"_remove_{self.fmt}")(files)
        self._record(installed=False)
        return self.changes

    # crontab: the marked block, merged into `crontab -l`, through `crontab -`.

    def _current_crontab(self) -> str:
        done = _tool(["crontab", "-l"], check=False)
        if done.returncode != 0:
            if "no crontab" in done.stderr.lower():
                return ""
            raise MemfuseError(f"crontab -l failed: {_why(done)}")
        return done.stdout

    def _install_crontab(self, files: dict[str, str]) -> None:
        current = self._current_crontab()
        try:
            merged = crontab.merge(current, files["crontab"])
        except ScheduleError as exc:
            raise MemfuseError(str(exc)) from None
        self._replace_crontab(current, merged)

    def _remove_crontab(self, _files: dict[str, str]) -> None:
        current = self._current_crontab()
        try:
            kept = crontab.remove(current, self.schedule.label)
        except ScheduleError as exc:
            raise MemfuseError(str(exc)) from None
        self._replace_crontab(current, kept)

    def _replace_crontab(self, current: str, new: str) -> None:
        if new == current:
            self.changes.append("the crontab already holds this schedule: nothing changed")
            return
        if current:
            kept = self._backup("crontab", current)
            self.changes.append(f"the crontab as it was is kept in {kept}")
        _tool(["crontab", "-"], stdin=new)
        diff = difflib.unified_diff(
            current.splitlines(), new.splitlines(), "crontab (before)", "crontab (now)", lineterm=""
        )
        self.changes += list(diff)

    def _backup(self, name: str, text: str) -> str:
        state = self.ctx.workspace.state
        state.ensure()
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S")
        state.write(f"{name}.before-{stamp}", text.encode("utf-8"))
        return str(state.path / f"{name}.before-{stamp}")

    # systemd and launchd: files in a folder, written only over memfuse's own.

    def _install_systemd(self, files: dict[str, str]) -> None:
        folder = units_dir()
        if shutil.which("systemctl") is None:
            raise MemfuseError(
                "systemctl is not on this PATH: no user timers can be enabled here (nothing"
                " was written); `memfuse cron --format systemd` prints the units to install"
                " by hand, or pick another --format"
            )
        probe = _tool(["systemctl", "--user", "show-environment"], check=False)
        if probe.returncode != 0:
            raise MemfuseError(
                f"systemd's user manager cannot be reached ({_why(probe)}): nothing was"
                " written. Log in to a session that has one (or `loginctl enable-linger"
                " $USER` and log in again), or pick another --format"
            )
        written = self._write_own(folder, files, lambda t, _n: self._is_ours_systemd(t))
        timers = [name for name in files if name.endswith(".timer")]
        with _undone_on_failure(written):
            _tool(["systemctl", "--user", "daemon-reload"])
            _tool(["systemctl", "--user", "enable", "--now", "--", *timers])
        self.changes.append(f"enabled {', '.join(timers)}")
        self.changes.append(
            "user timers run while your user manager does: `loginctl enable-linger` keeps it"
            " running when you are logged out"
        )

    def _remove_systemd(self, files: dict[str, str]) -> None:
        folder = units_dir()
        timers = [name for name in files if name.endswith(".timer")]
        if shutil.which("systemctl") is not None:
            _tool(["systemctl", "--user", "disable", "--now", "--", *timers], check=False)
        self._remove_own(folder, files, lambda text, _name: self._is_ours_systemd(text))
        if shutil.which("systemctl") is not None:
            _tool(["systemctl", "--user", "daemon-reload"], check=False)

    def _is_ours_systemd(self, text: str) -> bool:
        return systemd.is_generated(text, self.schedule.label)

    def _install_launchd(self, files: dict[str, str]) -> None:
        folder = agents_dir()
        if shutil.which("launchctl") is None:
            raise MemfuseError(
                "launchctl is not on this PATH (launchd agents are macOS's): nothing was"
                " written; pick the --format of this machine's scheduler"
            )
        written = self._write_own(folder, files, launchd.is_generated)
        domain = f"gui/{os.getuid()}"
        with _undone_on_failure(written):
            for name in files:
                label = name.removesuffix(".plist")
                _tool(["launchctl", "bootout", f"{domain}/{label}"], check=False)
                _tool(["launchctl", "bootstrap", domain, str(folder / name)])
                self.changes.append(f"loaded {label}")

    def _remove_launchd(self, files: dict[str, str]) -> None:
        folder = agents_dir()
        if shutil.which("launchctl") is not None:
            for name in files:
                label = name.removesuffix(".plist")
                _tool(["launchctl", "bootout", f"gui/{os.getuid()}/{label}"], check=False)
        self._remove_own(folder, files, launchd.is_generated)

    def _write_own(
        self, folder: Path, files: dict[str, str], ours: Callable[[str, str], bool]
    ) -> dict[Path, str | None]:
        """Write the files, only over memfuse's own; what each held before (None: absent)."""
        foreign = [
            name for name in files
            if (text := _read_text(folder / name)) is not None and not ours(text, name)
        ]  # fmt: skip
        if foreign:
            raise MemfuseError(
                f"{', '.join(str(folder / n) for n in foreign)} exist and memfuse did not write"
                " them: move them away or remove them first (nothing was changed)"
            )
        written: dict[Path, str | None] = {}
        with _undone_on_failure(written):
            for name, text in files.items():
                target = folder / name
                before = _read_text(target)
                if before == text:
                    continue
                try:
                    write_atomic(
                        folder, target, text.encode("utf-8"), mode=0o644, create_parents=True
                    )
                except (OSError, UnsafePath) as exc:
                    raise MemfuseError(f"cannot write {target}: {exc}") from None
                written[target] = before
                self.changes.append(f"wrote {target}")
        if not self.changes:
            self.changes.append(f"{folder} already holds this schedule: nothing changed")
        return written

    def _remove_own(
        self, folder: Path, files: Iterable[str], ours: Callable[[str, str], bool]
    ) -> None:
        for name in files:
            text = _read_text(folder / name)
            if text is None:
                continue
            if not ours(text, name):
                self.changes.append(f"left {folder / name}: memfuse did not write it")
                continue
            (folder / name).unlink()
            self.changes.append(f"removed {folder / name}")

    # OpenClaw: jobs declared by key through its own CLI; the Gateway owns its store.

    def _install_openclaw(self, _files: dict[str, str]) -> None:
        self._need_openclaw()
        self.schedule, changes = cron_openclaw.install(_tool, self.schedule)
        self.changes += changes

    def _remove_openclaw(self, _files: dict[str, str]) -> None:
        self._need_openclaw()
        self.changes += cron_openclaw.remove(_tool, self.schedule)

    @staticmethod
    def _need_openclaw() -> None:
        if shutil.which("openclaw") is None:
            raise MemfuseError("openclaw is not on this PATH: install OpenClaw or pick --format")

    def _record(self, *, installed: bool) -> None:
        """The schedule in the state folder, for `status` to tell a missed run by."""
        state = self.ctx.workspace.state
        state.ensure()
        if not installed:
            if _recorded_format(state.path / SCHEDULE_FILE) in (self.fmt, None):
                state.remove(SCHEDULE_FILE)  # another format's schedule still runs: kept
            return
        record = {
            "format": self.fmt,
            "label": self.schedule.label,
            "runs": {r.name: [f"{h:02d}:{m:02d}" for h, m in r.times] for r in self.schedule.runs},
            # Missed runs are counted from here on, in the zone the scheduler reads the times in.
            "installed": self.ctx.settings.now.isoformat(timespec="seconds"),
            "zone": scheduler_zone(),
        }
        state.write(SCHEDULE_FILE, json.dumps(record, indent=2).encode("utf-8"))


def scheduler_zone(localtime: Path = Path("/etc/localtime")) -> str | None:
    """The time zone cron, systemd and launchd read a schedule's times in: the system's
    (`/etc/localtime`'s zone, else `/etc/timezone`), not the operator's `TZ`, which the
    scheduler never sees. None when neither names a zone: the local rules then apply."""
    real = os.path.realpath(localtime)
    if "/zoneinfo/" in real:
        return real.split("/zoneinfo/", 1)[1]
    with contextlib.suppress(OSError, UnicodeDecodeError):
        named = localtime.with_name("timezone").read_text(encoding="utf-8").strip()
        if re.fullmatch(r"[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*", named):
            return named
    return None


def _recorded_format(path: Path) -> str | None:
    """The format of the recorded schedule; None when there is none or it cannot be read."""
    try:
        record = json.loads(_read_text(path) or "null")
    except (ValueError, MemfuseError):
        return None
    found = record.get("format") if isinstance(record, dict) else None
    return found if isinstance(found, str) else None


@contextlib.contextmanager
def _undone_on_failure(written: dict[Path, str | None]) -> Iterator[None]:
    """Files written for an install put back as they were when a later step fails, so a
    failed install leaves nothing half-done."""
    try:
        yield
    except BaseException:
        for path, before in written.items():
            with contextlib.suppress(OSError, UnsafePath):
                if before is None:
                    path.unlink(missing_ok=True)
                else:
                    write_atomic(path.parent, path, before.encode("utf-8"), mode=0o644)
        raise


def _read_text(path: Path) -> str | None:
    """A schedule file's text (at most 1 MiB); a FIFO or a device is refused, never waited on."""
    try:
        raw = read_file(Path("/"), path.absolute(), 1 << 20)
    except FileNotFoundError:
        return None
    except UnsafePath as exc:
        raise MemfuseError(f"cannot read {path}: {exc}") from None
    except OSError as exc:
        raise MemfuseError(f"cannot read {path}: {exc.strerror}") from None
    return raw.decode("utf-8", errors="replace")


def _tool(
    argv: list[str], *, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """A scheduler's own command (crontab, systemctl, launchctl, openclaw), bounded in time."""
    try:
        done = subprocess.run(
            argv, input=stdin, capture_output=True, text=True, timeout=TOOL_TIMEOUT,
            stdin=None if stdin is not None else subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        raise MemfuseError(f"{argv[0]} is not on this PATH") from None
    except subprocess.TimeoutExpired:
        raise MemfuseError(f"{shlex.join(argv[:3])} did not finish in {TOOL_TIMEOUT:g} s") from None
    if check and done.returncode != 0:
        raise MemfuseError(f"{shlex.join(argv[:4])} failed (exit {done.returncode}): {_why(done)}")
    return done


def _why(done: subprocess.CompletedProcess[str]) -> str:
    """What a failed tool said about why: its stderr, or the error of a JSON answer."""
    said = done.stderr or ""
    try:
        answer = json.loads(done.stdout[: 1 << 20]) if done.stdout else None
    except ValueError:
        answer = None
    error = answer.get("error") if isinstance(answer, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if isinstance(message, str) and message.strip():
        said = message if not said.strip() else said
    elif not said.strip():
        said = done.stdout or ""
    return cause(said)


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


# --- checking a schedule -------------------------------------------------------------------

_STDERR_AWAY = re.compile(r"(^|\s)(2>|&>|>&)")


def read_jobs(fmt: Format, text_or_files: str | dict[str, str]) -> list[Job]:
    """The jobs a scheduler's text or files hold."""
    if fmt == "crontab":
        assert isinstance(text_or_files, str)
        return crontab.parse(text_or_files)
    if fmt == "openclaw":
        assert isinstance(text_or_files, str)
        return openclaw.parse(text_or_files)
    files = {text_or_files: ""} if isinstance(text_or_files, str) else text_or_files
    return systemd.parse(files) if fmt == "systemd" else launchd.parse(files)


def _source(fmt: Format, file: str | None, files: dict[str, str]) -> tuple[list[Job], str]:
    if file is None:
        text = files["crontab"] if fmt == "crontab" else None
        if fmt == "openclaw":
            text = next(iter(files.values()))
        what = f"the {fmt} schedule `memfuse cron` prints"
        return read_jobs(fmt, text if text is not None else files), what
    if fmt in ("crontab", "openclaw"):
        if file == "-":
            return read_jobs(fmt, sys.stdin.read(1 << 22)), "stdin"
        return read_jobs(fmt, _must_read(Path(file))), file
    path = Path(file)
    suffixes = (".service", ".timer") if fmt == "systemd" else (".plist",)
    names = sorted(p for p in path.iterdir() if p.suffix in suffixes) if path.is_dir() else [path]
    found = {p.name: _must_read(p) for p in names}
    if fmt == "systemd":  # a service's timer sits beside it
        for p in names:
            timer = p.with_suffix(".timer")
            if p.suffix == ".service" and timer.name not in found and timer.exists():
                found[timer.name] = _must_read(timer)
    return read_jobs(fmt, found), file


def _must_read(path: Path) -> str:
    text = _read_text(path)
    if text is None:
        raise ConfigError(f"{path} does not exist")
    return text


def _check(
    ctx: RunContext, schedule: Schedule, files: dict[str, str], request: Request
) -> CommandResult:
    try:
        jobs, source = _source(request.fmt, request.file, files)
    except ParseError as exc:
        raise ConfigError(f"cannot read the {request.fmt} schedule: {exc}") from None
    timeout = max(CHECK_TIMEOUT_FLOOR, ctx.settings.timeout * 6)
    own = _own(ctx.settings, schedule)
    shell = request.fmt in ("crontab", "openclaw")  # a line run by sh (an OpenClaw `exec:`)
    checks = [c for job in jobs if (c := check_job(job, timeout, own, shell)) is not None]
    if request.fmt == "systemd":
        checks += _systemd_verify(files if request.file is None else None)
    busy = _writers_beside(request, files)
    _flag_clashes(jobs, checks, busy)
    failed = [c for c in checks if not c["ok"]]
    code = ExitCode.FATAL if failed or not checks else ExitCode.OK
    checks += [
        {"job": name, "command": "(not memfuse's: it rewrites MEMORY.md)",
         "when": " and ".join(f"{h:02d}:{m:02d}" for h, m in times), "ok": True,
         "findings": [], "problems": []}
        for name, times in busy
    ]  # fmt: skip
    data: CronCheckData = {"format": request.fmt, "source": source, "jobs": checks}
    if code != ExitCode.OK:
        data["error"] = (
            f"{len(failed)} scheduled job(s) would fail" if checks else "no memfuse job found"
        )
    return CommandResult("cron", data, tuple(render.cron_check(data)), exit_code=code)


def _own(settings: Settings, schedule: Schedule) -> cron_trial.Own:
    """This memfuse and the operator's own settings, which every trial runs with."""
    argv = schedule.runs[0].argv
    flags = cron_trial.STORE_FLAGS
    store = {flag: argv[i + 1] for i, flag in enumerate(argv[:-1]) if flag in flags}
    found = mcporter_config_path(settings, os.environ)  # the one this memfuse reads unnamed
    if found is not None:
        store.setdefault("--mcporter-config", str(found))
    server = find_server(settings)
    transport, _why = choose_transport(settings, server)
    command = "" if isinstance(server, Exception) else server.command
    return cron_trial.Own(
        memfuse=tuple(memfuse_command()),
        store=store,
        workspace=settings.workspace,
        state_dir=settings.state_dir,
        env=dict(os.environ),
        home=_home().as_posix(),
        needs_node=transport == "mcporter" or command == "node",
    )


def _writers_beside(request: Request, files: dict[str, str]) -> cron_openclaw.Busy:
    """The jobs beside the checked ones that rewrite MEMORY.md: OpenClaw's dreaming (its
    config), and those of a checked OpenClaw job list."""
    busy = cron_openclaw.dreaming(os.environ)
    if request.fmt == "openclaw" and request.file != "-":
        path = request.file
        text = next(iter(files.values())) if path is None else _must_read(Path(path))
        try:
            listed = json.loads(text)
        except ValueError:
            listed = None
        listed = listed.get("jobs") if isinstance(listed, dict) else listed
        found = writers.busy_times(listed if isinstance(listed, list) else [])
        busy = found or busy  # the Gateway's own job says it better than the config
    return busy


def _flag_clashes(jobs: list[Job], checks: list[CronJobCheck], busy: cron_openclaw.Busy) -> None:
    """A memfuse run that reads MEMORY.md in the minute another job rewrites it fails."""
    for job in jobs:
        if _memfuse_sub(job.argv) not in writers.MEMORY_READERS:
            continue
        for name, times in busy:
            shared = sorted(set(times) & set(job.times))
            if not shared:
                continue
            check = next((c for c in checks if c["job"] == job.source), None)
            if check is None:
                continue
            at = " and ".join(f"{h:02d}:{m:02d}" for h, m in shared)
            check["problems"].append(
                f"runs at {at}, the minute {name!r} rewrites MEMORY.md: `memfuse cron"
                " --install` moves it clear (or move it yourself)"
            )
            check["ok"] = False


def _memfuse_sub(argv: tuple[str, ...]) -> str | None:
    """The lifecycle subcommand a job's argv runs, None when it is not a memfuse job."""
    return cron_trial.subcommand(argv)[0]


def check_job(
    job: Job, timeout: float, own: cron_trial.Own, shell: bool = True
) -> CronJobCheck | None:
    """Check one memfuse job: what in it would change what runs is a finding; this memfuse,
    with the operator's own settings, is run on its subcommand with --dry-run. None for a job
    that is not memfuse's."""
    job = cron_trial.unwrap_env(job)
    if _memfuse_sub(job.argv) is None:
        return None
    problems: list[str] = []
    if _STDERR_AWAY.search(job.command):
        problems.append(
            "stderr is redirected away from the scheduler's mail: a run that needs a person"
            " could never tell anyone (leave stderr alone; memfuse keeps its own log)"
        )
    path = dict(job.env).get("PATH", cron_trial.CRON_DEFAULT_PATH)
    first = job.argv[0]
    program = first if "/" in first else shutil.which(first, path=path)
    ours = list(own.memfuse)
    same = program is not None and _same_program([program, *job.argv[1:]], ours)
    if program is not None and not same:
        # A job file may be the agent's: only this very memfuse is ever run to check one.
        problems.append(
            f"runs {shlex.join([program, *job.argv[1 : len(ours)]])}, not this memfuse"
            f" ({shlex.join(ours)}): not run; `memfuse cron` prints the line to use"
        )
    trial = cron_trial.plan(job, own, same_program=same)
    if shell:
        trial.findings += cron_trial.shell_findings(job.command)
    if trial.argv is not None:
        problems += _dry_run(trial.argv, trial.env, timeout)
    return {"job": job.source, "command": shlex.join(job.argv), "when": job.when,
            "ok": not problems and not trial.findings, "findings": trial.findings,
            "problems": problems}  # fmt: skip


def _same_program(argv: list[str], ours: list[str]) -> bool:
    """Whether `argv` starts with this memfuse's own command (the same files, links resolved)."""
    if len(argv) < len(ours) or argv[1 : len(ours)] != ours[1:]:
        return False
    return os.path.realpath(argv[0]) == os.path.realpath(ours[0])


def _dry_run(trial: list[str], env: dict[str, str], timeout: float) -> list[str]:
    home = _home()
    try:
        done = subprocess.run(
            trial, env=env, cwd=home if home.is_dir() else "/",
            stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return [f"did not finish within {timeout:g}s"]
    except OSError as exc:
        return [f"cannot be run: {exc.strerror or exc}"]
    try:
        envelope = json.loads(done.stdout)
    except ValueError:
        return [f"exit {done.returncode}: {_tail(done.stderr.decode('utf-8', 'replace'))}"]
    if envelope.get("status") == "ok" and done.returncode == 0:
        return []
    data = envelope.get("data", {})
    warnings = [str(w) for w in envelope.get("warnings", [])]
    reason = str(data.get("error") or (warnings[0] if warnings else envelope.get("status")))
    return [f"would {'fail' if done.returncode else 'degrade'}: {reason}"]


def _systemd_verify(files: dict[str, str] | None) -> list[CronJobCheck]:
    """`systemd-analyze verify` of the generated units, where the tool exists: systemd's own
    parser must find nothing to say about them."""
    tool = shutil.which("systemd-analyze")
    if tool is None or files is None:
        return []
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memfuse-units-") as tmp:
        for name, text in files.items():
            Path(tmp, name).write_text(text, encoding="utf-8")
        units = sorted(str(Path(tmp, n)) for n in files)
        try:
            done = subprocess.run(
                [tool, "verify", "--man=no", *units], capture_output=True, text=True,
                timeout=TOOL_TIMEOUT, check=False, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            problems = [f"could not run: {exc}"]
        else:
            said = [line for line in done.stderr.splitlines() if tmp in line]
            problems = [line.replace(tmp + "/", "") for line in said]
            if done.returncode != 0 and not problems:
                problems = [_tail(done.stderr)]
    return [{"job": "systemd-analyze verify", "command": f"{tool} verify", "when": "",
             "ok": not problems, "findings": [], "problems": problems}]  # fmt: skip
