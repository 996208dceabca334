"""What a scheduler is to memfuse: one module, one `Scheduler`, one line in the registry.

A scheduler renders the schedule as its own files, installs and removes them beside the
user's own entries, reads its files back into `Job`s for `cron --check`, and says the zone it
reads the times in (which `status` counts missed runs by). What it needs of this machine (the
environment, the home folder, a bounded way to run its program, a place to keep a backup) is
handed to it as a `Machine`; it reaches nothing else.
"""

from __future__ import annotations

import abc
import contextlib
import json
import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from memfuse.confine import UnsafePath, read_file, write_atomic
from memfuse.errors import ConfigError, MemfuseError
from memfuse.report import cause
from memfuse.schedule.runs import Job, MemoryRewriter, Schedule

__all__ = ["InstallOutcome", "Machine", "MemoryRewriter", "Scheduler", "ToolRunner", "system_zone"]

TOOL_TIMEOUT = 60.0  # a scheduler's own program: each call
ToolRunner = Callable[..., subprocess.CompletedProcess[str]]


@dataclass(frozen=True)
class Machine:
    """This machine as a scheduler may see it: handed in, never looked up."""

    env: Mapping[str, str]
    home: Path
    tool: ToolRunner
    which: Callable[[str], str | None]
    backup: Callable[[str, str], str]  # (name, text) kept in the state folder → where
    alert_failed_runs: int  # the settings' [alert] values, which a printed schedule states
    alert_max_age_hours: float
    state_dir: Path | None = None


@dataclass
class InstallOutcome:
    """What an install or removal did: the schedule as put in place, and every change."""

    schedule: Schedule
    changes: list[str] = field(default_factory=list)


class Scheduler(abc.ABC):
    """One scheduler. Subclasses set the class attributes and implement every abstract method;
    the registry refuses one that does not."""

    name: ClassVar[str]  # the --format value
    summary: ClassVar[str]  # --format's help: what it is, in a few words
    source_help: ClassVar[str]  # what `cron --check FILE` reads for it
    program: ClassVar[str] = ""  # the program its install runs ("": none)
    shell: ClassVar[bool] = False  # a job's line is run by sh
    stdin_ok: ClassVar[bool] = False  # `cron --check -` reads its text from stdin
    routes: ClassVar[str] = ""  # how to get it on a machine that lacks it
    own_writers: ClassVar[bool] = False  # its install reads MEMORY.md's other writers itself

    @abc.abstractmethod
    def render(self, schedule: Schedule, machine: Machine) -> dict[str, str]:
        """{file name: text} of the schedule."""

    @abc.abstractmethod
    def install(
        self, schedule: Schedule, files: dict[str, str], machine: Machine
    ) -> InstallOutcome:
        """Put the files in place beside the user's own entries."""

    @abc.abstractmethod
    def remove(self, schedule: Schedule, files: dict[str, str], machine: Machine) -> list[str]:
        """Take this schedule out, and nothing else."""

    @abc.abstractmethod
    def read(self, files: dict[str, str]) -> list[Job]:
        """The jobs the scheduler's files hold (raises ParseError)."""

    def available(self, machine: Machine) -> bool:
        """Whether this machine can run the scheduler (its program is here)."""
        return not self.program or machine.which(self.program) is not None

    def load(self, path: Path) -> dict[str, str]:
        """{name: text} of a file given to `cron --check`."""
        return {path.name: must_read(path)}

    def printed(self, files: dict[str, str]) -> str:
        shown = "\n".join(f"# ==> {name} <==\n{text.rstrip()}\n" for name, text in files.items())
        return shown.rstrip("\n")

    def verify(self, files: dict[str, str], machine: Machine) -> list[tuple[str, list[str]]]:
        """(what, problems) of the scheduler's own checker over the rendered files."""
        return []

    def zone(self, machine: Machine) -> str | None:
        """The zone the scheduler reads the schedule's times in (None: local rules)."""
        return system_zone()

    def writers_here(self, machine: Machine) -> list[MemoryRewriter]:
        """Jobs of this scheduler's host on this machine that rewrite MEMORY.md."""
        return []

    # `cron --all-agents`: a host that configures several agents, each its own workspace.
    lists_agents = False

    def roster_in(self, machine: Machine) -> str:
        """Where the host's configuration lists its agents, in its words, with the file it
        was looked for in on this machine."""
        return ""

    def agents(self, machine: Machine) -> list[tuple[str, str]]:
        """(id, workspace) of every agent the host's configuration lists."""
        return []

    def left_out(self, machine: Machine) -> str | None:
        """The agents its configuration lists past what `agents` takes, as a warning."""
        return None

    def every_agent(self) -> contextlib.AbstractContextManager[int]:
        """One `--all-agents` command's work: inside it, how many agents' installs may run side
        by side (1: in turn), and what they share (a host's job list, read once)."""
        return contextlib.nullcontext(1)

    def strays(self, machine: Machine, ids: list[str], *, remove: bool) -> list[str]:
        """memfuse's jobs of agents no longer listed (`ids` are those listed): named, or
        removed when `remove`."""
        return []

    def crossings(self, machine: Machine) -> list[str]:
        """What lets one configured agent reach another agent's memory (`memfuse serve`
        entries its tool policy does not keep from it), each with its fix."""
        return []

    def unread(self, machine: Machine) -> str | None:
        """Why this scheduler's host configuration on this machine cannot be read (memfuse
        then takes the host's defaults), None when it can or there is none."""
        return None

    def writers_in(self, files: dict[str, str]) -> list[MemoryRewriter] | None:
        """The jobs that rewrite MEMORY.md in a checked file (None: the file cannot say)."""
        return None

    def where(self, schedule: Schedule, machine: Machine) -> str:
        """Where the installed schedule lives, for `status`."""
        return f"{self.name}: {', '.join(self.render(schedule, machine))}"

    def alerts(self, machine: Machine) -> str:
        """Where a failed scheduled run is reported."""
        return "a failed run is reported by `memfuse status` (exit 4)"


def system_zone(localtime: Path = Path("/etc/localtime")) -> str | None:
    """The time zone a system scheduler reads times in: the system's (`/etc/localtime`'s zone,
    else `/etc/timezone`), not the operator's `TZ`, which it never sees. None when neither
    names a zone: the local rules then apply."""
    real = os.path.realpath(localtime)
    if "/zoneinfo/" in real:
        return real.split("/zoneinfo/", 1)[1]
    with contextlib.suppress(OSError, UnicodeDecodeError):
        named = localtime.with_name("timezone").read_text(encoding="utf-8").strip()
        if re.fullmatch(r"[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*", named):
            return named
    return None


def run_tool(
    argv: list[str],
    *,
    stdin: str | None = None,
    check: bool = True,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> subprocess.CompletedProcess[str]:
    """A scheduler's own command, bounded in time. `run` starts it (tests: a stand-in that
    answers in-process, as `subprocess.run` would)."""
    try:
        done = run(
            argv, input=stdin, capture_output=True, text=True, timeout=TOOL_TIMEOUT,
            stdin=None if stdin is not None else subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        raise MemfuseError(f"{argv[0]} is not on this PATH") from None
    except subprocess.TimeoutExpired:
        raise MemfuseError(f"{shlex.join(argv[:3])} did not finish in {TOOL_TIMEOUT:g} s") from None
    if check and done.returncode != 0:
        raise MemfuseError(f"{shlex.join(argv[:4])} failed (exit {done.returncode}): {why(done)}")
    return done


def why(done: subprocess.CompletedProcess[str]) -> str:
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


def tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def read_text(path: Path) -> str | None:
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


def must_read(path: Path) -> str:
    text = read_text(path)
    if text is None:
        raise ConfigError(f"{path} does not exist")
    return text


@contextlib.contextmanager
def undone_on_failure(written: dict[Path, str | None]) -> Iterator[None]:
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


def write_own(
    folder: Path, files: dict[str, str], ours: Callable[[str, str], bool], changes: list[str]
) -> dict[Path, str | None]:
    """Write the files, only over memfuse's own; what each held before (None: absent)."""
    foreign = [
        name for name in files
        if (text := read_text(folder / name)) is not None and not ours(text, name)
    ]  # fmt: skip
    if foreign:
        raise MemfuseError(
            f"{', '.join(str(folder / n) for n in foreign)} exist and memfuse did not write"
            " them: move them away or remove them first (nothing was changed)"
        )
    written: dict[Path, str | None] = {}
    before_changes = len(changes)
    with undone_on_failure(written):
        for name, text in files.items():
            target = folder / name
            before = read_text(target)
            if before == text:
                continue
            try:
                write_atomic(folder, target, text.encode("utf-8"), mode=0o644, create_parents=True)
            except (OSError, UnsafePath) as exc:
                raise MemfuseError(f"cannot write {target}: {exc}") from None
            written[target] = before
            changes.append(f"wrote {target}")
    if len(changes) == before_changes:
        changes.append(f"{folder} already holds these files: nothing changed")
    return written


def remove_own(
    folder: Path, names: Iterable[str], ours: Callable[[str, str], bool], changes: list[str]
) -> None:
    for name in names:
        text = read_text(folder / name)
        if text is None:
            continue
        if not ours(text, name):
            changes.append(f"left {folder / name}: memfuse did not write it")
            continue
        (folder / name).unlink()
        changes.append(f"removed {folder / name}")


def load_folder(path: Path, suffixes: tuple[str, ...], beside: dict[str, str]) -> dict[str, str]:
    """{name: text} of a file, or of a folder's files with these suffixes; a file's companion
    (`beside`: suffix → suffix) is read from beside it too."""
    names = [path]
    if path.is_dir():
        names = sorted(p for p in path.iterdir() if p.suffix in suffixes)
    found = {p.name: must_read(p) for p in names}
    for p in names:
        other = p.with_suffix(beside[p.suffix]) if p.suffix in beside else None
        if other is not None and other.name not in found and other.exists():
            found[other.name] = must_read(other)
    return found


def checker(argv: list[str], files: dict[str, str], machine: Machine) -> list[str]:
    """What a scheduler's own checker says about the files (written to a folder of their own):
    its lines that name them, or its last line when it fails without naming one."""
    with tempfile.TemporaryDirectory(prefix="memfuse-check-") as tmp:
        for name, text in files.items():
            Path(tmp, name).write_text(text, encoding="utf-8")
        try:
            done = machine.tool([*argv, *sorted(str(Path(tmp, n)) for n in files)], check=False)
        except MemfuseError as exc:
            return [f"could not run: {exc}"]
        problems = [line.replace(tmp + "/", "") for line in done.stderr.splitlines() if tmp in line]
        if done.returncode != 0 and not problems:
            problems = [tail(done.stderr)]
        return problems
