"""doctor's checks, each a `Check` line in the order a person fixes them (those that name why a
store cannot be reached are memfuse.store.diagnose's, which every run uses too)."""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from memfuse.errors import ConfigError, MemfuseError
from memfuse.host import workspace_in
from memfuse.ledger.ledger import Ledger
from memfuse.ledger.reconcile import PRUNE, judge
from memfuse.ledger.stale import gone_from_journals
from memfuse.report import Reporter
from memfuse.run.history import History
from memfuse.settings import Settings, mask_secret
from memfuse.setup.entry import find_server_js, not_installed, package_version
from memfuse.state.folder import note_generation
from memfuse.store.answers import StoreStatus
from memfuse.store.client import StoreClient, StoreError
from memfuse.store.connect import Server
from memfuse.store.diagnose import (
    Check,
    bridge_check,
    config_check,
    installed_how,
    missing_program,
    server_detail,
)
from memfuse.store.generations import limit_variable
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Workspace
from memfuse.workspace.position import JOURNAL_PREFIXES


@dataclass(frozen=True)
class Probe:
    """What doctor looks at, handed in by the command (the store opened on first use)."""

    settings: Settings
    workspace: Workspace
    classifier: Classifier
    reporter: Reporter
    store: Callable[[], StoreClient]
    server: Callable[[], Server]
    server_said: Callable[[], str | None]
    server_log: Path
    transport_why: Callable[[], str | None]


def run_checks(probe: Probe) -> tuple[list[Check], int | None]:
    """Every check doctor makes, and the store's generation when it answered. A critical
    failure of the server's entry or of mcporter stops the checks after it."""
    s = probe.settings
    ws = s.workspace
    checks: list[Check] = []
    if not ws.is_dir():
        checks.append(Check("workspace", False, f"{ws} does not exist or is not a folder"))
    elif not os.access(ws, os.W_OK):
        checks.append(Check("workspace", False, f"{ws} is not writable"))
    else:
        checks.append(Check("workspace", True, str(ws)))
    journals = probe.workspace.daily_journals()
    odd = probe.workspace.look_alikes()
    detail = (
        f"{len(journals)} journal(s), newest {max(journals)}"
        if journals
        else f"no memory/YYYY-MM-DD.md under {ws}"
    )
    if odd:
        detail += f"; {len(odd)} name(s) read like a journal but are not, never read: {odd[:3]}"
    checks.append(Check("journals", bool(journals) and not odd, detail, critical=False))
    files = " + ".join(str(p) for p in s.config_files) or "defaults (no file)"
    checks.append(Check("config", not s.config_refused, files, critical=False))
    entry = config_check(s, os.environ)
    if entry is not None:
        if not entry.ok:
            checks.append(_installed(s))  # the README's step 2, before its step 3: the entry
        checks.append(entry)
        if entry.fault:
            return checks, None
    if ws.is_dir():  # the state folder keeps the server's stderr, for a failure to quote
        with contextlib.suppress(OSError, MemfuseError):
            probe.workspace.state.ensure()
    generation = _store_checks(probe, checks)
    if not generation and entry is not None and not entry.ok:
        checks = [_before_setup(c, s) for c in checks]
    if generation is None:
        return checks, None
    rr = s.rerank
    used_by = ", ".join(
        ["recall"] + [n for n, on in (("surface", rr.surface), ("tidy", rr.tidy)) if on]
    )
    detail = (
        f"{rr.provider} {rr.model} at {rr.base_url}, key {mask_secret(rr.api_key)};"
        f" reranks {used_by}"
        if rr.enabled
        else f"disabled (provider {rr.provider}, key {mask_secret(rr.api_key)})"
    )
    checks.append(Check("reranker", True, detail, critical=False))
    return checks, generation or None


def _before_setup(check: Check, settings: Settings) -> Check:
    """Where no store answered and its entry is not written, what stands between the user and
    a sync is agent-memory and its entry: FAILs, in the README's order. mcporter is not,
    unless chosen: with the entry written, `auto` starts the server itself."""
    if check.ok:
        return check
    if check.name in ("agent-memory", "mcporter-config"):
        return replace(check, critical=True)
    if check.name == "mcporter" and settings.transport == "auto":
        detail = f"{check.detail} — needed only with --transport mcporter: once agent-memory's"
        return replace(
            check, critical=False, detail=f"{detail} entry is written, memfuse starts it"
        )
    return check


def _installed(settings: Settings) -> Check:
    """Where agent-memory is on this machine, when its entry is not written yet: the route to
    take on a machine whose package registry has none (the common case today)."""
    home = Path(os.environ.get("HOME") or Path.home())
    found = find_server_js(home)
    if found is None:
        return Check("agent-memory", False, not_installed(), critical=False)
    version = package_version(found) or "of an unknown version"
    return Check(
        "agent-memory", True,
        f"{version} at {found} ({installed_how(str(found))}); `memfuse doctor --install-config"
        f" FILE` writes its {settings.server} entry", critical=False,
    )  # fmt: skip


def _store_checks(probe: Probe, checks: list[Check]) -> int | None:
    """The transport, mcporter, the server and what it offers; None when the rest of the
    checks cannot run (mcporter itself is missing), else the generation (0: unknown)."""
    s = probe.settings
    try:
        store = probe.store()
    except ConfigError as exc:  # e.g. a server that would run inside the workspace
        checks.append(Check("server", False, str(exc)))
        return None
    checks.append(Check("transport", True, f"{store.transport} ({probe.transport_why()})", False))
    if store.transport == "mcporter":
        bridge = bridge_check(s, store.bridge_version())
        checks.append(bridge)
        if not bridge.ok:
            return None
    status = store.status()
    if status is None:
        last = probe.reporter.warnings[-1] if probe.reporter.warnings else "no answer"
        said = probe.server_said()
        missing = missing_program(probe.server())
        log = probe.server_log if said else None
        detail = server_detail(s, last, asked="status", missing=missing, said=said, log=log)
        checks.append(Check("server", False, detail))
        return 0
    by_type = ", ".join(f"{k} {v}" for k, v in sorted(status.by_type.items()))
    total = status.total if status.total is not None else "?"
    checks.append(Check("server", True, f"{s.server}: {total} memories ({by_type or 'empty'})"))
    tools, generation = _tool_checks(probe, store, status)
    checks += tools
    index = _index_health(probe, store)
    if index is not None:
        checks.append(index)
    return generation


def _tool_checks(probe: Probe, store: StoreClient, status: StoreStatus) -> tuple[list[Check], int]:
    """The tools memfuse needs, the generation they reveal, and that generation's limits."""
    try:
        offered = store.tools()
    except StoreError as exc:
        return [Check("tools", False, str(exc))], 0
    generation = store.generation()
    assert generation is not None  # its tools were listed just now
    needed = generation.tools.needed()
    missing = [t for t in needed if t not in offered]
    checks = [
        Check("tools", not missing,
              "all of " + ", ".join(needed) if not missing
              else "missing: " + ", ".join(missing))
    ]  # fmt: skip
    state = probe.workspace.state
    if state.exists():
        with contextlib.suppress(OSError, MemfuseError):
            note_generation(state, generation.number, probe.settings.now)
    checks.append(Check("generation", True, f"agent-memory {generation.number}.x", False))
    checks += _capacity(probe, store, status) + _auto_ingest(probe, store, generation.number)
    return checks, generation.number


def _capacity(probe: Probe, store: StoreClient, status: StoreStatus) -> list[Check]:
    """Warn when the store keeps fewer memories of a type than the journals of the surface
    window hold: reflect would evict (5.x: archive) the rest, journals included."""
    limits = store.limits(status)
    if not limits:
        return []
    s = probe.settings
    start = s.now.date() - timedelta(days=s.surface.window_days - 1)
    window = probe.workspace.window(start, s.now.date())
    produced: Counter[str] = Counter(
        probe.classifier.classify(bullet.text).type
        for journal in probe.workspace.journals(window, probe.reporter.warn)
        for bullet in journal.bullets
    )
    produced["total"] = sum(produced.values())
    short = [name for name in limits if produced.get(name, 0) > limits[name]]
    if not short:
        return [Check("capacity", True, f"limits {limits} hold the surface window", False)]
    days = s.surface.window_days
    detail = (
        "; ".join(
            f"{name}: keeps {limits[name]}, the journals of the last {days} days hold"
            f" {produced.get(name, 0)}"
            for name in short
        )
        + f": reflect will evict the rest; raise {', '.join(map(limit_variable, short))} in the"
        " server's env (the mcporter config entry)"
    )
    return [Check("capacity", False, detail, False)]


def _auto_ingest(probe: Probe, store: StoreClient, generation: int) -> list[Check]:
    """3.x–5.x ingest a workspace on their own unless AGENT_MEMORY_AUTO_INGEST=0."""
    found = store.auto_ingest()
    if found is None:
        return []  # 2.x, or an entry memfuse cannot read (HTTP, an import): nothing to say
    if not found.on:
        return [Check("auto-ingest", True, "off (AGENT_MEMORY_AUTO_INGEST=0)", False)]
    home = os.environ.get("HOME") or str(Path.home())
    watched = found.watched or str(workspace_in(home))
    if Path(watched).expanduser().absolute() != probe.settings.workspace:
        return [
            Check("auto-ingest", True, f"on, but it watches {watched}, not this workspace", False)
        ]
    detail = (
        f"agent-memory {generation}.x ingests {watched} by itself, behind memfuse's back (the"
        " same journals twice): set AGENT_MEMORY_AUTO_INGEST=0 in the server entry's env"
    )
    return [Check("auto-ingest", False, detail, False)]


def _index_health(probe: Probe, store: StoreClient) -> Check | None:
    """The ledger against the store's journal URIs (read-only: nothing is marked)."""
    state = probe.workspace.state
    if not state.ledger.exists():
        return None
    listed = store.uris_under(JOURNAL_PREFIXES)
    if listed is None:
        return Check("index", False, "the store's journal URIs could not be listed", False)
    ledger = Ledger(state)
    try:
        entries = ledger.all_entries()
    finally:
        ledger.close()
    report = judge(entries, listed, probe.settings.now)
    stale = gone_from_journals(probe.workspace, report.lost, probe.reporter.warn)
    lost = len(report.lost) - len(stale)
    outcomes = Counter(e.outcome for e in entries)
    runs, _problem = History(state).load()
    pending = runs["sync"][-1].counts.get("failed", 0) if runs["sync"] else 0
    detail = (
        f"{report.expected} in the ledger at journal URIs, {report.present} in the store,"
        f" {lost} lost, {len(report.forgotten) + outcomes['forgotten']} forgotten"
        f" by the store's decay, {pending} pending retry,"
        f" {outcomes['rejected']} rejected by the gate"
    )
    if stale:
        detail += f", {len(stale)} stale (their bullet is gone from the journals: {PRUNE})"
    if lost:
        detail += "; `memfuse sync --verify` re-sends the lost ones"
    return Check("index", not report.lost, detail, critical=False)
