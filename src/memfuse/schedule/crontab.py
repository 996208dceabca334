"""The crontab block: memfuse's runs between two marker lines, merged into the user's crontab.

Quoting follows what cron itself does with a line (cronie/vixie `load_env` and `do_command`):
an unescaped `%` ends the command and starts its stdin, and a backslash takes the next character
with it whatever it is — so a `%` is written `\\%` outside any backslash of the argument's own,
and the shell then sees the word single-quoted. Environment lines are not shell: their value
runs to the end of the line unless it is wrapped in one kind of quote, with no escapes.
"""

from __future__ import annotations

import difflib
import re

from memfuse.errors import MemfuseError
from memfuse.schedule.base import InstallOutcome, Machine, Scheduler, why
from memfuse.schedule.cronexpr import cron_times, daily_times
from memfuse.schedule.runs import Job, ParseError, Schedule, ScheduleError, merge_adjacent
from memfuse.schedule.shwords import split_command
from memfuse.settings import Settings

_SAFE_WORD = re.compile(r"[A-Za-z0-9_@+=:,./-]+")
_MARKER = re.compile(r"# (>>>|<<<) memfuse ([a-z0-9-]+) \1")
_ASSIGNMENT = re.compile(r"([^\s='\"#][^\s=]*)[ \t]*=[ \t]*(.*)")
_FIVE_FIELDS = re.compile(r"([^ \t]+)[ \t]+" * 5 + r"(.*)")  # minute hour day month weekday
_NICKNAMES = {"@daily": ((0, 0),), "@midnight": ((0, 0),)}
_UP_TO_PERCENT = re.compile(r"(?:\\.|[^\\%])*\\?", re.DOTALL)
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)
_CSPACE = " \t\r\v\f"  # what C's isspace() skips and trims in cron's parser


def begin_marker(label: str) -> str:
    return f"# >>> memfuse {label} >>>"


def end_marker(label: str) -> str:
    return f"# <<< memfuse {label} <<<"


def render(
    schedule: Schedule,
    *,
    failed_runs: int = Settings.alert_failed_runs,
    max_age_hours: float = Settings.alert_max_age_hours,
) -> str:
    """The block for this schedule, markers included, ending with a newline."""
    lines = [
        begin_marker(schedule.label),
        "# memfuse: the memory lifecycle from cron, written by memfuse for this host.",
        "# memfuse rewrites only the lines between these two markers; edit outside them. The",
        "# SHELL and PATH below also apply to the lines under this block: keep it at the end.",
        "# With -q a run prints nothing unless a person is needed (the store failed in"
        f" {failed_runs} runs",
        f"# in a row, no success for {max_age_hours:g} h, or a fatal error); cron mails what it"
        " prints, so",
        "# point MAILTO at a mailbox someone reads. Nothing is redirected: every run logs to",
        "# memfuse.log in its state folder (rotated) and records itself for `memfuse status`.",
        *(f"# note: {note}" for note in schedule.notes),
        *(env_line(name, value) for name, value in schedule.env),
        "# MAILTO=you@example.org",
    ]
    for run in schedule.runs:
        lines += ["", f"# {run.comment}"]
        command = " ".join(_word(arg) for arg in run.argv)  # sh words, `%` escaped for cron
        lines += [f"{when} {command}" for when in cron_times(run.times)]
    lines.append(end_marker(schedule.label))
    return "\n".join(lines) + "\n"


def _word(arg: str) -> str:
    if _SAFE_WORD.fullmatch(arg):
        return arg
    quoted = "'" + arg.replace("'", "'\"'\"'") + "'"
    # `'\%'` closes the quote first, so the backslash cron sees is never the argument's own.
    return quoted.replace("%", "'\\%'")


def env_line(name: str, value: str) -> str:
    """NAME=value as cron reads it: quoted only when the bare value would change."""
    bare = value == value.strip(_CSPACE) and value[:1] not in ("'", '"') and value != ""
    if bare:
        return f"{name}={value}"
    for quote in ('"', "'"):
        if quote not in value:
            return f"{name}={quote}{value}{quote}"
    raise ScheduleError(
        f"cron cannot set {name} to {value!r}: it starts with a quote or has blanks at an end,"
        " and holds both kinds of quote"
    )


def merge(existing: str, block: str) -> str:
    """`existing` with this block's label's previous block replaced by `block`, or `block`
    appended; every other line is returned byte for byte.

    A begin marker without its end (or two blocks of one label) is refused rather than guessed
    at: a wrong guess would delete lines the user wrote.
    """
    label = _block_label(block)
    lines = existing.split("\n")
    span = _find_block(lines, label)
    new = block.rstrip("\n").split("\n")
    if span is None:
        if not existing:
            return block
        return existing + ("" if existing.endswith("\n") else "\n") + block
    start, end = span
    rest = lines[end + 1 :] or [""]  # the end marker was the last line, with no newline
    return "\n".join([*lines[:start], *new, *rest])


def remove(existing: str, label: str) -> str:
    """`existing` without this label's block; unchanged when there is none."""
    lines = existing.split("\n")
    span = _find_block(lines, label)
    if span is None:
        return existing
    start, end = span
    return "\n".join([*lines[:start], *lines[end + 1 :]])


def _block_label(block: str) -> str:
    first = block.split("\n", 1)[0]
    found = _MARKER.fullmatch(first)
    if not found or found.group(1) != ">>>":
        raise ScheduleError("a memfuse block starts with its begin marker line")
    label = found.group(2)
    if not block.rstrip("\n").endswith("\n" + end_marker(label)):
        raise ScheduleError("a memfuse block ends with its end marker line")
    return label


def _find_block(lines: list[str], label: str) -> tuple[int, int] | None:
    starts = [i for i, line in enumerate(lines) if line.strip() == begin_marker(label)]
    ends = [i for i, line in enumerate(lines) if line.strip() == end_marker(label)]
    if not starts and not ends:
        return None
    if len(starts) == 1 and len(ends) == 1 and starts[0] < ends[0]:
        return starts[0], ends[0]
    raise ScheduleError(
        f"the crontab's memfuse {label} markers are not one begin line followed by one end line"
        f" (begin at lines {[i + 1 for i in starts]}, end at {[i + 1 for i in ends]}):"
        " fix them with `crontab -e` first"
    )


def parse(text: str) -> list[Job]:
    """Every job line of a crontab, with the environment cron gives it, as cron reads it.

    Lines are split on newlines only (a carriage return is part of a line to cron), an
    environment line applies to the lines after it, and a job's argv ends at the first shell
    operator; leading `NAME=value` words of the command join its environment.
    """
    env: dict[str, str] = {}
    jobs: list[Job] = []
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.lstrip(_CSPACE)
        if not line or line.startswith("#"):
            continue
        assignment = parse_env_line(line)
        if assignment is not None:
            env[assignment[0]] = assignment[1]
            continue
        when, times, field = _split_job(line, number)
        command = cron_command(field)
        argv, assigned = split_command(command, f"line {number}")
        job_env = tuple({**env, **assigned}.items())
        jobs.append(Job(f"line {number}", argv, job_env, times, when, command))
    return merge_adjacent(jobs)


def parse_env_line(line: str) -> tuple[str, str] | None:
    """(name, value) when cron takes the line as an environment setting, else None."""
    found = _ASSIGNMENT.fullmatch(line)
    if not found:
        return None
    name, value = found.group(1), found.group(2)
    if value[:1] in ("'", '"'):
        close = value.find(value[0], 1)
        if close < 0 or value[close + 1 :].strip(_CSPACE):
            return None
        return name, value[1:close]
    return name, value.rstrip(_CSPACE)


def _split_job(line: str, number: int) -> tuple[str, tuple[tuple[int, int], ...], str]:
    if line.startswith("@"):
        parts = line.split(None, 1)
        nickname = parts[0]
        return nickname, _NICKNAMES.get(nickname, ()), parts[1] if len(parts) > 1 else ""
    found = _FIVE_FIELDS.fullmatch(line)
    if not found:
        raise ParseError(f"line {number} is neither an assignment nor a job: {line!r}")
    fields = found.groups()[:5]
    return " ".join(fields), daily_times(*fields), found.group(6)


def cron_command(field: str) -> str:
    """The command cron hands to the shell: up to the first unescaped `%`, with `\\%` as `%`."""
    head = _UP_TO_PERCENT.findall(field)[0]  # a backslash takes the next character with it
    return _ESCAPED.sub(lambda m: "%" if m[1] == "%" else m[0], head)


class Crontab(Scheduler):
    """The user's crontab: memfuse's marked block merged in through `crontab -`."""

    name = "crontab"
    summary = "the default"
    source_help = "a crontab"
    program = "crontab"
    shell = True
    stdin_ok = True
    routes = (
        "install cron (Debian/Ubuntu: `apt-get install cron`; Fedora: `dnf install cronie`)"
        " and start its service"
    )

    def render(self, schedule: Schedule, machine: Machine) -> dict[str, str]:
        block = render(
            schedule,
            failed_runs=machine.alert_failed_runs,
            max_age_hours=machine.alert_max_age_hours,
        )
        return {"crontab": block}

    def printed(self, files: dict[str, str]) -> str:
        return files["crontab"].rstrip("\n")

    def read(self, files: dict[str, str]) -> list[Job]:
        return parse(next(iter(files.values())))

    def install(
        self, schedule: Schedule, files: dict[str, str], machine: Machine
    ) -> InstallOutcome:
        current = _current(machine)  # markers not one block: a ScheduleError, nothing written
        return InstallOutcome(
            schedule, _replace(current, merge(current, files["crontab"]), machine)
        )

    def remove(self, schedule: Schedule, files: dict[str, str], machine: Machine) -> list[str]:
        current = _current(machine)
        return _replace(current, remove(current, schedule.label), machine)

    def where(self, schedule: Schedule, machine: Machine) -> str:
        return f"your crontab (`crontab -l`), between the {schedule.label} markers"

    def alerts(self, machine: Machine) -> str:
        return (
            "cron mails what a failed run prints to the crontab's MAILTO (when this machine"
            " delivers mail), and `memfuse status` exits 4"
        )


def _current(machine: Machine) -> str:
    done = machine.tool(["crontab", "-l"], check=False)
    if done.returncode != 0:
        if "no crontab" in done.stderr.lower():
            return ""
        raise MemfuseError(f"crontab -l failed: {why(done)}")
    return str(done.stdout)


def _replace(current: str, new: str, machine: Machine) -> list[str]:
    if new == current:
        return ["the crontab already holds this schedule: nothing changed"]
    changes = []
    if current:
        changes.append(f"the crontab as it was is kept in {machine.backup('crontab', current)}")
    machine.tool(["crontab", "-"], stdin=new)
    diff = difflib.unified_diff(
        current.splitlines(), new.splitlines(), "crontab (before)", "crontab (now)", lineterm=""
    )
    return changes + list(diff)


SCHEDULER = Crontab()
