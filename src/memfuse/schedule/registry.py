"""The schedulers memfuse knows: the built-ins, one line each, then other packages' entry
points in the `memfuse.schedulers` group, all through `register` (docs/architecture.md, "A
scheduler"). The first built-in is the default `--format`.
"""

from __future__ import annotations

import importlib
import inspect
import threading
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
PLUGIN_WAIT = 10.0  # seconds other packages' schedulers may take to load, all of them
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
    """Every scheduler, loaded once a process; another package's that fails (`sys.exit` too), is
    incomplete or hangs is set aside with why: the CLI reads `--format`'s choices at import."""
    if not _REGISTERED:
        loaded: dict[str, Scheduler] = {}
        for module in BUILTIN:
            register(importlib.import_module(module).SCHEDULER, loaded)
        builtin, found, loading = set(loaded), list[Scheduler](), ["(installed packages)"]
        worker = threading.Thread(target=_plugins, args=(builtin, found, loading), daemon=True)
        worker.start()
        worker.join(PLUGIN_WAIT)  # a plugin that hangs keeps its thread, not the command
        if worker.is_alive():
            _REFUSED[loading[0]] = f"still loading after {PLUGIN_WAIT:g} s: set aside"
        for scheduler in list(found):  # a built-in's name stays the built-in's
            loaded.setdefault(scheduler.name, scheduler)
        _REGISTERED.update(loaded)
    return _REGISTERED


def _plugins(builtin: set[str], found: list[Scheduler], loading: list[str]) -> None:
    """Load other packages' schedulers into `found` (the one loading now named in `loading`)."""
    try:  # another package's code, or its broken entry_points.txt: any failure is its own
        for point in entry_points(group=GROUP):
            if point.name not in builtin:
                loading[0] = point.name
                try:
                    found.append(register(point.load(), {}))
                except BaseException as exc:  # `sys.exit` too
                    _REFUSED[point.name] = f"{type(exc).__name__}: {exc}"[:300]
    except BaseException as exc:
        _REFUSED["(installed packages)"] = f"{type(exc).__name__}: {exc}"[:300]


def refused() -> list[str]:
    """Each other package's scheduler set aside, and why: said by doctor and in every run."""
    _load()
    return [f"the scheduler plugin {name!r} did not load ({why})" for name, why in _REFUSED.items()]


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
