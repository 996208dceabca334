"""What `memfuse cron --check` may run of a job, and what it only reports (issue 33; the rule
and its findings: docs/security.md, "`cron --check` executes only this memfuse")."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memfuse.config import FLAG_OPTIONS
from memfuse.schedule import Job
from memfuse.schedule.plan import LIFECYCLE
from memfuse.settings import mask_url
from memfuse.state.folder import default_state_dir

CRON_DEFAULT_PATH = "/usr/bin:/bin"

# Options of the lifecycle commands that only shape the run (cli._RUN_PARAMS and each
# command's own): passed to the trial as written. -q and --json are the trial's own.
_RUN_SWITCHES = {"--verbose", "-v", "--strict"}
_RUN_VALUES = {"--wait", "--now"}
_OWN_SWITCHES = {
    "sync": {"--all", "--prune", "--explain", "--verify", "--dry-run"},
    "surface": {"--stdout", "--dry-run"},
    "tidy": {"--archive", "--dry-run"},
}
_OWN_VALUES = {"sync": {"--date", "--since", "--days"}, "surface": set(), "tidy": set()}
_DROPPED = {"-q", "--quiet", "--json"}

# Settings a job may not choose for its trial: they decide what runs or where data goes.
STORE_FLAGS = ("--mcporter", "--mcporter-config", "--server", "--transport")
_FLAG_NAMES = {flag: option for option in FLAG_OPTIONS for flag in option.flag}
_VARIABLE_NAMES = {option.env: option for option in FLAG_OPTIONS if option.env}

# Variables that change what Python, node, the loader or the shell run.
LOADER = ("LD_", "DYLD_", "PYTHON", "VIRTUAL_ENV", "NODE_", "BASH_ENV", "PERL5", "RUBY")
_LOADER_EXACT = {"ENV", "IFS", "CDPATH", "GCONV_PATH"}
# Variables that move memfuse's configuration, state or store: compared with the operator's.
_PLACES = {"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"}
_STORE_PREFIXES = ("MCPORTER_", "AGENT_MEMORY_", "OPENAI_")
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|AUTH", re.I)
# What sh reads of a line, for shell_findings: a quoted string, an escaped character, an
# expansion or an operator (`&` not part of a redirection: `>&`, `&>`).
_SH_TOKEN = re.compile(r"""'[^']*'?|"(?:\\.|[^"\\])*"?|\\.?|[$`;|()]|(?<!>)&(?!>)""", re.DOTALL)
_ESCAPED = re.compile(r"\\.", re.DOTALL)


@dataclass(frozen=True)
class Own:
    """This memfuse and the operator's own settings: what a trial runs with."""

    memfuse: tuple[str, ...]
    store: Mapping[str, str]  # flag → the operator's value, as `memfuse cron` writes it
    workspace: Path
    state_dir: Path | None
    env: Mapping[str, str]
    home: str
    needs_node: bool = False


@dataclass
class Trial:
    """What a check runs for one job (`argv` None: nothing), and what it found in the job."""

    argv: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)
    # The store settings the job names in place of the operator's (outside the workspace):
    # the job runs with them, the trial would not, so the job is not tried (issue 47).
    elsewhere: list[str] = field(default_factory=list)
    again_env: list[str] = field(default_factory=list)  # what tries it as written
    again_flags: list[str] = field(default_factory=list)


def unwrap_env(job: Job) -> Job:
    """`env [-i] NAME=value … memfuse …` as the job it is: memfuse, with those variables."""
    argv, extra = list(job.argv), dict(job.env)
    if not argv or Path(argv[0]).name != "env":
        return job
    rest = argv[1:]
    while rest and (rest[0] in ("-i", "-", "--ignore-environment") or "=" in rest[0]):
        word = rest.pop(0)
        if "=" in word and not word.startswith("-"):
            name, _eq, value = word.partition("=")
            extra[name] = value
    if not rest or rest[0].startswith("-"):
        return job
    return Job(job.source, tuple(rest), tuple(extra.items()), job.times, job.when, job.command,
               job.unread)  # fmt: skip


def subcommand(argv: tuple[str, ...]) -> tuple[str | None, int]:
    """The lifecycle subcommand a job's argv runs and the index after the program (None when
    it is not a memfuse job)."""
    start = 1
    python = re.fullmatch(r"python(3(\.\d+)?)?", Path(argv[0]).name) if argv else None
    if len(argv) >= 3 and argv[1:3] == ("-m", "memfuse") and python:
        start = 3
    elif not argv or Path(argv[0]).name != "memfuse":
        return None, 0
    sub = next((a for a in argv[start:] if not a.startswith("-")), None)
    return (sub if sub in LIFECYCLE else None), start


def program_of(job: Job) -> str | None:
    """The program a job runs: its own path, or the one found on the job's PATH (cron's
    default when it sets none); None when there is none."""
    first = job.argv[0]
    path = dict(job.env).get("PATH", CRON_DEFAULT_PATH)
    return first if "/" in first else shutil.which(first, path=path)


def plan(job: Job, own: Own, *, same_program: bool) -> Trial:
    """The trial of one memfuse job, and every finding in it."""
    trial = Trial()
    sub, start = subcommand(job.argv)
    assert sub is not None
    env = dict(job.env)
    roots = [own.workspace]
    words = list(job.argv[start:])
    where = _Places(own, env)
    if words and words[0] != sub:
        trial.findings.append(
            f"{shlex.join(words[: words.index(sub)])} before the subcommand: memfuse takes its"
            " options after it (the job fails with a usage error)"
        )
    words = words[words.index(sub) + 1 :]
    kept, chosen = _options(sub, words, trial.findings)
    workspace = chosen.get("--workspace") or env.get("MEMFUSE_WORKSPACE")
    if workspace:
        roots.append(Path(where.resolve(workspace)))
    where.roots = roots
    for note in job.unread:
        trial.findings.append(
            f"sets {note}: not reproduced by the check, and it changes what runs or where"
            " (memfuse's schedule never sets it)"
        )
    for name, value in env.items():
        found = _missing_config(name, value, where) or _variable(name, value, own, where)
        if found is None:
            continue
        if found.startswith("sets ") and _store_variable(name) and not where.inside(value):
            trial.elsewhere.append(found)
            trial.again_env.append(f"{name}={mask_url(value) if '://' in value else value}")
        else:
            trial.findings.append(found)
    _store_flags(trial, chosen, own, where)
    own_state = _own_state(own, workspace, where)
    for flag, state in (("--state-dir", chosen.get("--state-dir")),
                        ("MEMFUSE_STATE_DIR", env.get("MEMFUSE_STATE_DIR"))):  # fmt: skip
        if state and where.real(state) != os.path.realpath(own_state):
            trial.findings.append(
                f"{flag} {state}{where.note(state)}: not the state folder this memfuse keeps for"
                f" the workspace ({own_state}); the check does not use it"
            )
    trial.findings += _path_findings(env.get("PATH", CRON_DEFAULT_PATH), job.argv[0], own, where)
    program = program_of(job)
    if program is not None and where.inside(os.path.dirname(where.resolve(program))):
        trial.findings.append(
            f"its program {job.argv[0]} lies inside the workspace, where the agent can replace"
            " it (or repoint the link) before cron runs it: name memfuse by its own path"
        )
    if not same_program or trial.elsewhere:
        return trial
    argv = [*own.memfuse, sub, *kept]
    if workspace:
        argv += ["--workspace", where.resolve(workspace)]
    for flag in STORE_FLAGS:
        if flag in own.store:
            argv += [flag, own.store[flag]]
    argv += ["--state-dir", str(own_state), "--dry-run", "--json"]
    trial.argv = argv
    tunables = {
        name: value for name, value in env.items()
        if name in _VARIABLE_NAMES and not _VARIABLE_NAMES[name].trusted
    }  # fmt: skip
    trial.env = {**own.env, **tunables}
    return trial


def _store_flags(trial: Trial, chosen: dict[str, str], own: Own, where: _Places) -> None:
    """The store settings the job chooses by flag that are not the operator's: a finding
    when the agent could have written them (inside the workspace) or the job fails as
    written, else not tried (`elsewhere`)."""
    for flag, value in chosen.items():
        if flag not in STORE_FLAGS or _same_setting(flag, value, own, where):
            continue
        said = (
            f"{flag} {value}{where.note(value)}: not this memfuse's own"
            f" ({own.store.get(flag, 'its default')}); the check does not run with it"
        )
        missing = _missing_config(flag, value, where)
        if missing is not None or where.inside(value):
            trial.findings.append(missing or said)
        else:
            trial.elsewhere.append(said)
            trial.again_flags += [flag, value]


_CONFIG_NAMES = {"--mcporter-config", "MCPORTER_CONFIG"}


def _missing_config(name: str, value: str, where: _Places) -> str | None:
    """A mcporter config the job names that is not there: the job fails as written (exit 78),
    which the check says rather than "not tried" (review of issues 47 and 50)."""
    option = _VARIABLE_NAMES.get(name)
    if name not in _CONFIG_NAMES and (option is None or option.flag[0] != "--mcporter-config"):
        return None
    if os.path.isfile(where.real(value)):
        return None
    return (
        f"{name} {value}: no such file, so the job fails as written (store misconfigured, exit 78)"
    )


@dataclass
class _Places:
    """Paths as the job's shell would see them (`~` is the home, a relative path is cron's
    folder, the home), and whether they lie in a workspace."""

    own: Own
    env: Mapping[str, str]
    roots: list[Path] = field(default_factory=list)

    def resolve(self, value: str) -> str:
        if value == "~" or value.startswith("~/"):
            value = self.own.home + value[1:]
        return os.path.normpath(os.path.join(self.own.home, value))

    def real(self, value: str) -> str:
        return os.path.realpath(self.resolve(value))

    def inside(self, value: str) -> bool:
        real = Path(self.real(value))
        return any(real == Path(os.path.realpath(r)) or real.is_relative_to(os.path.realpath(r))
                   for r in self.roots)  # fmt: skip

    def note(self, value: str) -> str:
        return ", inside the workspace, where the agent writes" if self.inside(value) else ""


def _options(sub: str, words: list[str], findings: list[str]) -> tuple[list[str], dict[str, str]]:
    """(the options passed to the trial, the settings the job chose by flag)."""
    kept: list[str] = []
    chosen: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        flag, eq, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        option = _FLAG_NAMES.get(flag)
        takes = flag in _RUN_VALUES or flag in _OWN_VALUES[sub] or option is not None
        value = inline if eq else (words[i + 1] if takes and i + 1 < len(words) else None)
        i += 1 if eq or not takes else 2
        if flag in _DROPPED:
            continue
        if flag in _RUN_SWITCHES or flag in _OWN_SWITCHES[sub]:
            kept.append(flag)
        elif takes and value is None:
            findings.append(f"{flag} has no value: the job fails with a usage error")
        elif option is not None and option.trusted:
            chosen[option.flag[0]] = str(value)
        elif takes:
            kept += [flag, str(value)]
        else:
            findings.append(
                f"{word}: not an option of memfuse {sub} (the job fails with a usage error);"
                " not passed to the check"
            )
    return kept, chosen


def _store_variable(name: str) -> bool:
    """Whether a variable names how memfuse reaches its store or where it reads its
    configuration (not what Python or the shell runs)."""
    option = _VARIABLE_NAMES.get(name)
    if option is not None:
        return option.flag[0] in STORE_FLAGS
    return name in _PLACES or name.startswith(_STORE_PREFIXES)


def _variable(name: str, value: str, own: Own, where: _Places) -> str | None:
    """What one variable of the job would change, or None when it is harmless or the
    operator's own."""
    shown = (
        name if _SECRET.search(name) else f"{name}={mask_url(value) if '://' in value else value}"
    )
    if name.startswith(LOADER) or name in _LOADER_EXACT:
        return (
            f"sets {name}: a variable that changes what Python, node, the loader or the shell"
            " runs; not passed to the check, and not something memfuse's schedule sets"
        )
    if name == "SHELL":
        if value.startswith("/") and not where.inside(value):
            return None
        return f"sets {shown}{where.note(value)}: cron runs the job's line with it"
    option = _VARIABLE_NAMES.get(name)
    if option is not None:
        flag = option.flag[0]
        if flag not in STORE_FLAGS or _same_setting(flag, value, own, where):
            return None
        return (
            f"sets {shown}{where.note(value)}: not this memfuse's own {flag[2:]}"
            f" ({own.store.get(flag, 'its default')}); the check does not use it"
        )
    moves = name in _PLACES or (name.startswith(_STORE_PREFIXES) and not _SECRET.search(name))
    if not moves or own.env.get(name) == value or (name == "HOME" and value == own.home):
        return None
    return (
        f"sets {shown}{where.note(value)}, unlike this memfuse's own environment: it moves where"
        " memfuse or its store read their configuration; the check does not use it"
    )


def _same_setting(flag: str, value: str, own: Own, where: _Places) -> bool:
    mine = own.store.get(flag)
    if flag == "--mcporter":
        theirs, ours = shlex.split(value) or [""], shlex.split(mine or "mcporter")
        if theirs[1:] != ours[1:]:
            return False
        programs = [shutil.which(p, path=own.env.get("PATH")) or p for p in (theirs[0], ours[0])]
        return where.real(programs[0]) == where.real(programs[1])
    if flag == "--mcporter-config":
        return mine is not None and where.real(value) == where.real(mine)
    defaults = {"--server": "agent-memory", "--transport": "auto"}
    return value == (mine or defaults[flag])


def _own_state(own: Own, workspace: str | None, where: _Places) -> Path:
    """The state folder this memfuse keeps for the job's workspace."""
    target = where.resolve(workspace) if workspace else str(own.workspace)
    if own.state_dir is not None and os.path.realpath(target) == os.path.realpath(own.workspace):
        return own.state_dir
    return default_state_dir(Path(target), own.env)


def _path_findings(path: str, program: str, own: Own, where: _Places) -> list[str]:
    """PATH entries a job's programs could be taken from that are not the operator's to say:
    relative ones (cron's folder), and those inside the workspace."""
    found = []
    for entry in path.split(":"):
        if not entry.startswith("/"):
            found.append(
                f"PATH holds {entry or 'an empty entry'!r}: a relative entry names the folder"
                " the job starts in, so a program there would run for memfuse"
            )
        elif where.inside(entry):
            found.append(
                f"PATH holds {entry}, inside the workspace, where the agent writes: a program"
                " there (node, mcporter, memfuse) would run with your rights"
            )
    if "/" not in program and shutil.which(program, path=path) is None:
        found.append(f"{program} is not on this job's PATH ({path})")
    if own.needs_node and shutil.which("node", path=path) is None:
        found.append(f"node is not on this job's PATH ({path}): mcporter and a node server need it")
    return found


def shell_findings(command: str) -> list[str]:
    """What cron's shell would do with a job's line beyond running memfuse: expand `$…` or a
    backquote (which may run a program), or go on to another command after `;`, `|`, `&`
    or a parenthesis. Quoting is followed as sh follows it; redirections are left to the
    stderr rule."""
    found: set[str] = set()
    for token in _SH_TOKEN.findall(command):  # single quotes hide everything, `\\` one character
        if token[0] in "$`" or (token[0] == '"' and set(_ESCAPED.sub("", token)) & set("$`")):
            found.add("expand")
        elif token[0] in ";|()&":
            found.add("chain")
    said = []
    if "expand" in found:
        said.append(
            "its line holds `$` or a backquote outside single quotes: cron's shell expands it"
            " (a `$(…)` runs a program; a variable is one the check does not have)"
        )
    if "chain" in found:
        said.append(
            "its line goes on past memfuse (`;`, `|`, `&`, a parenthesis): cron runs that too,"
            " and the check runs none of it"
        )
    return said
