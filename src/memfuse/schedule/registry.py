"""The schedulers memfuse knows: the built-ins, one line each, then other packages' (docs/
architecture.md, "A scheduler").

Each built-in line names a module whose `SCHEDULER` is a complete `Scheduler`; another
installed package adds its own as an entry point in the `memfuse.schedulers` group naming its
`Scheduler` (`k8s = "memfuse_k8s:SCHEDULER"`), as llm loads its plugins beside its defaults.
Both go through `register`, which refuses an incomplete one; a built-in's name stays the
built-in's. The first built-in is the default `--format`. `cron --format`'s choices and help,
and the check that the docs list every scheduler, are read from here.
"""

from __future__ import annotations

import importlib
import inspect
from importlib.metadata import entry_points

from memfuse.schedule.base import Scheduler

BUILTIN = (
    "memfuse.schedule.crontab",
    "memfuse.schedule.systemd",
    "memfuse.schedule.launchd",
    "memfuse.schedule.openclaw",
)

GROUP = "memfuse.schedulers"  # other packages' schedulers: entry points naming a Scheduler

_REGISTERED: dict[str, Scheduler] = {}
_REFUSED: dict[str, str] = {}  # another package's entry point that failed to load: why
_TEXT_FIELDS = ("name", "summary", "source_help")


class IncompleteScheduler(TypeError):
    """A scheduler that lacks part of the protocol: refused when it is registered."""


def register(scheduler: Scheduler, into: dict[str, Scheduler] | None = None) -> Scheduler:
    """Add a scheduler; one that is incomplete (an abstract method, an empty field) is refused."""
    if not isinstance(scheduler, Scheduler):
        raise IncompleteScheduler(f"{scheduler!r} is not a Scheduler")
    missing = sorted(getattr(type(scheduler), "__abstractmethods__", ()))
    missing += [
        name for name in _TEXT_FIELDS
        if not isinstance(getattr(scheduler, name, None), str) or not getattr(scheduler, name)
    ]  # fmt: skip
    if inspect.isabstract(type(scheduler)) or missing:
        raise IncompleteScheduler(f"scheduler {scheduler!r} lacks {', '.join(missing)}")
    (_REGISTERED if into is None else into)[scheduler.name] = scheduler
    return scheduler


def _load() -> dict[str, Scheduler]:
    """Every scheduler, loaded once a process. Another package's that fails to load or is
    incomplete is set aside with why (`get` says it): the CLI reads `--format`'s choices at
    import, so a broken plugin must not stop every command, cron's `sync` among them."""
    if not _REGISTERED:
        loaded: dict[str, Scheduler] = {}
        for module in BUILTIN:
            register(importlib.import_module(module).SCHEDULER, loaded)
        builtin = set(loaded)
        for point in entry_points(group=GROUP):
            if point.name in builtin:
                continue
            try:
                scheduler = point.load()
                if getattr(scheduler, "name", None) not in builtin:
                    register(scheduler, loaded)
            except Exception as exc:  # another package's code: any failure is its own
                _REFUSED[point.name] = f"{type(exc).__name__}: {exc}"[:300]
        _REGISTERED.update(loaded)
    return _REGISTERED


def names() -> tuple[str, ...]:
    return tuple(_load())


def default() -> str:
    return names()[0]


def get(name: str) -> Scheduler:
    found = _load().get(name)
    if found is None:
        why = _REFUSED.get(name)
        if why is not None:
            raise KeyError(f"scheduler {name!r} did not load ({why})")
        raise KeyError(f"no scheduler {name!r}: one of {', '.join(names())}")
    return found


def every() -> tuple[Scheduler, ...]:
    return tuple(_load().values())


def format_help() -> str:
    """--format's help: each scheduler in its own words."""
    said = [f"{s.name} ({s.summary})" for s in every()]
    return "The scheduler: " + ", ".join(said[:-1]) + " or " + said[-1] + "."


def source_help() -> str:
    """What `cron --check FILE` reads, each scheduler's kind of file."""
    return ", ".join(s.source_help for s in every())
