"""`memfuse cron`: a crontab for this machine, and `--check` to run it the way cron would.

The crontab names every program by its absolute path (this memfuse, the mcporter and node it
found), passes the workspace and mcporter config in effect as flags, runs each job with `-q`
and redirects nothing: memfuse logs by itself, and what a quiet run prints (a person is needed)
goes to cron's mail.

`--check` reads a crontab (this one, or a file), and runs each memfuse job line as cron would:
an empty environment plus the crontab's own assignments, its PATH, no shell, `--dry-run --json`
added. A line fails the check when its run would fail or leave the store unreachable.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

from memfuse.errors import ConfigError, ExitCode
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.history import LIFECYCLE
from memfuse.run.output import CommandResult
from memfuse.run.results import CronCheckData, CronLine, CrontabData
from memfuse.settings import Settings

CRON_DEFAULT_PATH = "/usr/bin:/bin"
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
CHECK_TIMEOUT_FLOOR = 120.0


@dataclass(frozen=True)
class Job:
    schedule: str
    argv: tuple[str, ...]
    comment: str


@dataclass(frozen=True)
class Crontab:
    env: tuple[tuple[str, str], ...]
    jobs: tuple[Job, ...]
    notes: tuple[str, ...]
    failed_runs: int
    max_age_hours: float
    log: str

    def render(self) -> str:
        lines = [
            "# memfuse: the memory lifecycle from cron, printed by `memfuse cron` for this host.",
            "# Install with `crontab -e` and merge these lines with what is there.",
            "# With -q a run prints nothing unless a person is needed (the store failed in"
            f" {self.failed_runs} runs",
            f"# in a row, no success for {self.max_age_hours:g} h, or a fatal error); cron mails"
            " what it prints, so",
            "# point MAILTO at a mailbox someone reads. Nothing is redirected: every run logs to",
            f"# {self.log} (rotated) and records itself for `memfuse status`.",
            *(f"# note: {note}" for note in self.notes),
            *(f"{name}={value}" for name, value in self.env),
            "# MAILTO=you@example.org",
        ]
        for job in self.jobs:
            command = shlex.join(job.argv).replace("%", "\\%")  # % is a newline to cron
            lines += ["", f"# {job.comment}", f"{job.schedule} {command}"]
        return "\n".join(lines) + "\n"


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
) -> Crontab:
    """The crontab for these settings, on this machine."""
    notes: list[str] = []
    memfuse = memfuse or memfuse_command()
    mcporter = shlex.split(settings.mcporter) or ["mcporter"]
    found = which(mcporter[0])
    if found:
        mcporter[0] = str(Path(found).absolute())
    else:
        notes.append(f"{mcporter[0]!r} was not found on this PATH: install mcporter first")
    node = which("node")
    if node is None:
        notes.append("node was not found on this PATH: mcporter needs it")
    folders = [str(Path(p).parent) for p in (node, mcporter[0], memfuse[0]) if p and "/" in p]
    path = ":".join(dict.fromkeys([*folders, *SYSTEM_PATH]))

    defaults = {f.name: f.default for f in fields(Settings)}
    state = settings.state_dir
    options = ["--workspace", str(settings.workspace), "--mcporter", shlex.join(mcporter)]
    if state is not None:
        # Named, not left to the environment: cron's has no XDG_STATE_HOME a shell might set.
        options += ["--state-dir", str(state)]
    if settings.mcporter_config is not None:
        options += ["--mcporter-config", str(settings.mcporter_config)]
    for name in ("server", "transport"):
        value = getattr(settings, name)
        if value != defaults[name]:
            options += [f"--{name}", str(value)]
    if settings.rerank.enabled:
        notes.append(
            "the reranker's key comes from the environment, which cron does not have: add"
            " AGENT_MEMORY_RERANK_API_KEY=… below, or recall runs without the reranker"
        )
    tidy = ["tidy", "-q", *(["--archive"] if archive else [])]
    jobs = (
        Job("0 14,22 * * *", (*memfuse, "sync", "-q", "--wait", "300", *options),
            "14:00 and 22:00: journal bullets into agent-memory"),
        Job("5 14,22 * * *", (*memfuse, "surface", "-q", "--wait", "300", *options),
            "14:05 and 22:05: RECENT.md for the next sessions"),
        Job("0 3 * * *", (*memfuse, *tidy, *options),
            "03:00: the store's sleep cycle, MEMORY.md check and backup"
            + (", weekly roll-up" if archive else "")),
    )  # fmt: skip
    env = (("SHELL", "/bin/sh"), ("PATH", path))
    log = str(state / "memfuse.log") if state is not None else "memfuse's state folder"
    return Crontab(
        env, jobs, tuple(notes), settings.alert_failed_runs, settings.alert_max_age_hours, log
    )


# --- checking a crontab --------------------------------------------------------------------

_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_OPERATORS = set(";|&<>()")
_STDERR_AWAY = re.compile(r"(^|\s)(2>|&>|>&)")


@dataclass
class LineCheck:
    number: int
    line: str
    ok: bool = True
    problems: list[str] = field(default_factory=list)
    command: str | None = None

    def as_dict(self) -> CronLine:
        return {
            "line": self.number,
            "text": self.line,
            "command": self.command,
            "ok": self.ok,
            "problems": self.problems,
        }


def parse(text: str) -> list[tuple[int, str, dict[str, str], str]]:
    """The job lines of a crontab: (line number, line, environment so far, command)."""
    env: dict[str, str] = {}
    found = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        assignment = _ASSIGNMENT.match(line)
        if assignment:
            value = assignment.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            env[assignment.group(1)] = value
            continue
        if line.startswith("@"):
            parts = line.split(None, 1)
            command = parts[1] if len(parts) > 1 else ""
        else:
            parts = line.split(None, 5)
            command = parts[5] if len(parts) > 5 else ""
        command = re.split(r"(?<!\\)%", command, maxsplit=1)[0].replace("\\%", "%")
        found.append((number, line, dict(env), command))
    return found


def _memfuse_argv(command: str) -> tuple[list[str], dict[str, str], str | None]:
    """(argv up to the first shell operator, leading VAR=value assignments, the subcommand)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    argv: list[str] = []
    for token in tokens:
        if set(token) <= _OPERATORS:
            break
        argv.append(token)
    assigned: dict[str, str] = {}
    while argv and _ASSIGNMENT.match(argv[0]) and "/" not in argv[0].split("=", 1)[0]:
        name, value = argv.pop(0).split("=", 1)
        assigned[name] = value
    start = 1
    if len(argv) >= 3 and argv[1:3] == ["-m", "memfuse"] and _is_python(argv[0]):
        start = 3
    elif not argv or Path(argv[0]).name != "memfuse":
        return argv, assigned, None
    sub = next((a for a in argv[start:] if not a.startswith("-")), None)
    return argv, assigned, sub if sub in LIFECYCLE else None


def _is_python(program: str) -> bool:
    return re.fullmatch(r"python(3(\.\d+)?)?", Path(program).name) is not None


def check(text: str, timeout: float) -> list[LineCheck]:
    """Run every memfuse job of a crontab as cron would, with --dry-run."""
    user = pwd.getpwuid(os.getuid())
    results = []
    for number, line, env, command in parse(text):
        argv, assigned, sub = _memfuse_argv(command)
        if sub is None:
            continue
        result = LineCheck(number, line, command=shlex.join(argv))
        base = {
            "HOME": user.pw_dir,
            "LOGNAME": user.pw_name,
            "USER": user.pw_name,
            "SHELL": "/bin/sh",
            "PATH": CRON_DEFAULT_PATH,
        }
        run_env = {**base, **env, **assigned}
        if _STDERR_AWAY.search(command):
            result.problems.append(
                "stderr is redirected away from cron's mail: a run that needs a person could"
                " never tell anyone (leave stderr alone; memfuse keeps its own log)"
            )
        program = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=run_env["PATH"])
        if program is None:
            result.problems.append(f"{argv[0]} is not on this crontab's PATH ({run_env['PATH']})")
        else:
            result.problems += _run_line([program, *argv[1:]], run_env, timeout)
        result.ok = not result.problems
        results.append(result)
    return results


def _run_line(argv: list[str], env: dict[str, str], timeout: float) -> list[str]:
    trial = [a for a in argv if a not in ("-q", "--quiet")] + ["--dry-run", "--json"]
    try:
        done = subprocess.run(
            trial,
            env=env,
            cwd=env["HOME"] if os.path.isdir(env["HOME"]) else "/",
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [f"did not finish within {timeout:g}s"]
    except OSError as exc:
        return [f"cannot be run: {exc.strerror or exc}"]
    try:
        envelope = json.loads(done.stdout)
    except ValueError:
        tail = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return [f"exit {done.returncode}: {tail[-1] if tail else 'no output'}"]
    if envelope.get("status") == "ok" and done.returncode == 0:
        return []
    data = envelope.get("data", {})
    warnings = [str(w) for w in envelope.get("warnings", [])]
    reason = str(data.get("error") or (warnings[0] if warnings else envelope.get("status")))
    problems = [f"would {'fail' if done.returncode else 'degrade'}: {reason}"]
    if "exit 127" in reason and "node" in reason:
        problems[0] = f"node is not on this crontab's PATH ({env['PATH']}): {reason}"
    return problems


def run(ctx: RunContext, *, archive: bool, check_file: str | None, do_check: bool) -> CommandResult:
    s = ctx.settings
    crontab = build(s, archive=archive)
    if not do_check:
        text = crontab.render()
        printed: CrontabData = {"text": text, "notes": list(crontab.notes)}
        return CommandResult("cron", printed, payload=text.rstrip("\n"))
    if check_file is None:
        text, source = crontab.render(), "the crontab `memfuse cron` prints"
    else:
        text, source = _read_crontab(check_file)
    timeout = max(CHECK_TIMEOUT_FLOOR, s.timeout * 6)
    checks = check(text, timeout)
    failed = [c for c in checks if not c.ok]
    code = ExitCode.FATAL if failed or not checks else ExitCode.OK
    data: CronCheckData = {"source": source, "lines": [c.as_dict() for c in checks]}
    if code != ExitCode.OK:
        data["error"] = (
            f"{len(failed)} crontab line(s) would fail" if checks else "no memfuse job line found"
        )
    return CommandResult("cron", data, tuple(render.cron_check(data)), exit_code=code)


def _read_crontab(name: str) -> tuple[str, str]:
    if name == "-":
        return sys.stdin.read(), "stdin"
    try:
        return Path(name).read_text(encoding="utf-8"), name
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the crontab {name}: {exc}") from None
