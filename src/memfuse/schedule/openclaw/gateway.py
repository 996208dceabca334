"""`memfuse cron --format openclaw --install/--remove`: memfuse's jobs in OpenClaw's Gateway
cron, through the `openclaw` CLI as the package 2026.9.6 has it (docs/operations.md,
"OpenClaw"): each job declared whole in one `gateway call cron.add`, none for a job already in
place, calls that do not wait on each other side by side (each starts Node: seconds).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from memfuse.errors import MemfuseError
from memfuse.schedule import Schedule, writers
from memfuse.schedule.base import ToolRunner
from memfuse.schedule.openclaw import host
from memfuse.schedule.openclaw import jobs as openclaw

LIST_LIMIT = 16_000_000  # bytes of one answer read
PAGE_SIZE = 200  # the CLI's own page
MAX_PAGES = 50  # the CLI's own bound: 10 000 jobs
SIDE_BY_SIDE = 4  # `openclaw` calls at once, for one agent
AGENTS_SIDE_BY_SIDE = 2  # agents at once: each Node process is ~150 MB, 64 agents are allowed


_LOCK = threading.Lock()
_SHARED: list[list[dict[str, Any]] | None] = []  # within `shared`: the job list, once read
_ONCE: list[dict[str, Future[Any]]] = []  # within `shared`: what every agent reads, once


@contextlib.contextmanager
def shared() -> Iterator[int]:
    """Within it, every agent's install or removal reads one list of the Gateway's jobs, kept
    as this command's own calls change it (issue 57: one `cron list` per agent, and one more)."""
    _SHARED.append(None)
    _ONCE.append({})
    try:
        yield AGENTS_SIDE_BY_SIDE
    finally:
        _SHARED.pop()
        _ONCE.pop()


def once(key: str, start: Callable[[], Future[Any]]) -> Future[Any]:
    """Within `shared`, the read the first agent started for `key`: every agent's answer."""
    with _LOCK:
        kept = _ONCE[-1] if _ONCE else {}
        if key not in kept:
            kept[key] = start()
        return kept[key]


def list_jobs(tool: ToolRunner) -> list[dict[str, Any]]:
    """Every job the Gateway has, disabled ones too (within `shared`, as this command left it)."""
    with _LOCK:
        if not _SHARED:
            return _list(tool)
        if _SHARED[-1] is None:
            _SHARED[-1] = _list(tool)
        return list(_SHARED[-1] or [])


def forget(
    listed: list[dict[str, Any]], ids: set[str], new: tuple[dict[str, Any], ...] = ()
) -> list[dict[str, Any]]:
    """The jobs once `ids` are gone and `new` declared, from the shared list when there is one
    (its agents' removals each see the others' gone, in turn: the last sees none left)."""
    with _LOCK:
        known = _SHARED[-1] if _SHARED else None
        ids = ids | {str(j.get("id")) for j in new}
        kept = [j for j in (listed if known is None else known) if j.get("id") not in ids]
        if _SHARED:
            _SHARED[-1] = [*kept, *new]
        return kept


def _list(tool: ToolRunner) -> list[dict[str, Any]]:
    """`cron list --json` reads every page itself in OpenClaw 2026.9; an answer that says there
    is more (an older CLI, one page) is followed through the Gateway's own `cron.list`, page
    by page, to its end."""
    page = _answer(tool(["openclaw", "cron", "list", "--all", "--json"]), "openclaw cron list")
    jobs = _jobs_of(page)
    for _ in range(MAX_PAGES):
        if not (isinstance(page, dict) and page.get("hasMore") is True):
            return jobs
        offset = page.get("nextOffset")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < len(jobs) - 1:
            raise MemfuseError("OpenClaw's job list says there is more but not where it goes on")
        params = {"includeDisabled": True, "limit": PAGE_SIZE, "offset": offset}
        argv = openclaw.gateway_call("cron.list", params)
        page = _answer(tool(list(argv)), "openclaw gateway call cron.list")
        more = _jobs_of(page)
        if not more:
            return jobs
        jobs += more
    raise MemfuseError(f"OpenClaw's job list goes on past {MAX_PAGES} pages: not read further")


def install(
    tool: ToolRunner,
    schedule: Schedule,
    schedule_zone: str | None = None,
    agent: str | None = None,
) -> tuple[Schedule, list[str]]:
    """Declare the schedule's jobs (moved clear of MEMORY.md's other writers); the schedule
    as installed and what changed. A job the Gateway already has as declared costs no call;
    the others are declared at once, side by side."""
    listed = list_jobs(tool)
    schedule, _ = writers.clear_of(
        schedule, host.busy_times(listed), schedule_zone
    )  # said in its notes
    changes = _remove(tool, listed, schedule)
    keyed = {str(j.get("declarationKey")): j for j in listed if j.get("declarationKey")}
    declared = openclaw.declare_params(schedule, tz=schedule_zone, agent=agent)
    todo = [p for p in declared if not openclaw.in_place(keyed.get(p["declarationKey"]), p)]
    updates = [openclaw.update_params(keyed.get(p["declarationKey"]), p) for p in declared]
    calls = [*(("cron.add", p) for p in todo), *(("cron.update", u) for u in updates if u)]
    said = side_by_side(tool, [openclaw.gateway_call(*call) for call in calls], "cron.add/update")
    answers = dict(zip((p["name"] for p in todo), said, strict=False))
    renamed = {u["id"] for u in updates if u}
    for params in declared:
        name, answer = params["name"], answers.get(params["name"])
        if name not in answers:  # in place for cron.add
            job_id, created = keyed[params["declarationKey"]].get("id"), False
        else:
            job = answer.get("job", answer) if isinstance(answer, dict) else None
            job_id = job.get("id") if isinstance(job, dict) else None
            if not isinstance(job_id, str) or not job_id.strip():
                raise MemfuseError(f"openclaw's cron.add did not say the id of the job {name}")
            forget(listed, set(), (job,) if isinstance(job, dict) else ())
            created = not (isinstance(answer, dict) and answer.get("created") is False)
        if created:
            changes.append(f"added the OpenClaw job {name} ({job_id})")
        else:
            updated = (isinstance(answer, dict) and answer.get("updated")) or job_id in renamed
            changed = "updated" if updated else "already in place, unchanged"
            changes.append(f"the OpenClaw job {name} ({job_id}): {changed}")
    return schedule, changes


def remove(tool: ToolRunner, schedule: Schedule, listed: list[dict[str, Any]]) -> list[str]:
    """Remove this schedule's jobs (by key or name, by id) and nothing else."""
    changes = _remove(tool, listed, schedule, everything=True)
    return changes or ["OpenClaw has none of this schedule's jobs: nothing changed"]


def side_by_side(tool: ToolRunner, argvs: list[tuple[str, ...]], what: str) -> list[Any]:
    """Each command's JSON answer, in order. The commands run side by side: every `openclaw`
    call starts Node (seconds each), and the Gateway serializes what they ask of it."""
    if not argvs:
        return []
    with ThreadPoolExecutor(max_workers=min(SIDE_BY_SIDE, len(argvs))) as pool:
        done = [pool.submit(tool, list(argv)) for argv in argvs]
        return [_answer(future.result(), f"openclaw {what}") for future in done]


def _remove(
    tool: ToolRunner, listed: list[dict[str, Any]], schedule: Schedule, *, everything: bool = False
) -> list[str]:
    ids, unusable = openclaw.stale_ids(listed, schedule, keeping=not everything)
    forget(listed, set(ids))
    side_by_side(tool, [openclaw.remove_command(job_id) for job_id in ids], "cron rm")
    changes = [f"removed the OpenClaw job {job_id}" for job_id in ids]
    for name in unusable:
        changes.append(f"left the OpenClaw job {name}: the Gateway's list gives it no id")
    return changes


def _jobs_of(page: object) -> list[dict[str, Any]]:
    jobs = page.get("jobs") if isinstance(page, dict) else page
    if not isinstance(jobs, list):
        raise MemfuseError("OpenClaw's job list is not a list of jobs")
    return [job for job in jobs if isinstance(job, dict)]


def _answer(done: subprocess.CompletedProcess[str], what: str) -> Any:
    try:
        return json.loads(done.stdout[:LIST_LIMIT])
    except ValueError:
        raise MemfuseError(f"`{what}` did not answer JSON") from None
