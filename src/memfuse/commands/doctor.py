"""`memfuse doctor`: check each dependency and show the effective configuration."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from memfuse.errors import ConfigError, ExitCode, MemfuseError
from memfuse.ledger.ledger import Ledger
from memfuse.ledger.reconcile import judge
from memfuse.recall import semantic
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.history import History
from memfuse.run.output import CommandResult
from memfuse.run.results import CheckRow, DoctorData, InstallConfigData, PrintConfigData
from memfuse.settings import Settings, mask_secret
from memfuse.state.memo import note_generation
from memfuse.store.answers import StoreStatus
from memfuse.store.client import NEEDED_TOOLS, StoreError
from memfuse.store.server_entry import (
    CONFIG_MAX,
    mcporter_config_path,
    read_config,
    strip_jsonc,
)
from memfuse.untrusted import load_json
from memfuse.workspace.position import JOURNAL_PREFIXES


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    critical: bool = True

    def as_dict(self) -> CheckRow:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "critical": self.critical}


def run(ctx: RunContext, *, show_config: bool = False) -> CommandResult:
    s = ctx.settings
    checks: list[Check] = []
    extra: dict[str, int] = {}
    ws = s.workspace
    if not ws.is_dir():
        checks.append(Check("workspace", False, f"{ws} does not exist or is not a folder"))
    elif not os.access(ws, os.W_OK):
        checks.append(Check("workspace", False, f"{ws} is not writable"))
    else:
        checks.append(Check("workspace", True, str(ws)))
    journals = ctx.workspace.daily_journals()
    odd = ctx.workspace.look_alikes()
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
    entry = _server_entry_check(ctx)
    if entry is not None:
        checks.append(entry)
        if not entry.ok and entry.critical:
            return _result(ctx, checks, show_config=show_config)
    if ws.is_dir():  # the state folder keeps the server's stderr, for a failure to quote
        with contextlib.suppress(OSError, MemfuseError):
            ctx.workspace.state.ensure()

    if not _store_checks(ctx, checks, extra):
        return _result(ctx, checks, show_config=show_config)
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
    checks.append(Check("meaning", True, semantic.describe(ctx.embedder), critical=False))
    return _result(ctx, checks, extra, show_config=show_config)


def _store_checks(ctx: RunContext, checks: list[Check], extra: dict[str, int]) -> bool:
    """The transport, mcporter, the server and what it offers; False when the rest of the
    checks cannot run (mcporter itself is missing)."""
    s = ctx.settings
    try:
        store = ctx.store
    except ConfigError as exc:  # e.g. a server that would run inside the workspace
        checks.append(Check("server", False, str(exc)))
        return False
    checks.append(Check("transport", True, f"{store.transport} ({ctx.transport_why})", False))
    if store.transport == "mcporter":
        version = store.bridge_version()
        where = shutil.which(shlex.split(s.mcporter)[0]) or "not on PATH"
        detail = (
            f"{version} ({s.mcporter}; {where})"
            if version
            else f"mcporter not found or not runnable: {s.mcporter!r}"
        )
        checks.append(Check("mcporter", version is not None, detail))
        if version is None:
            return False
    status = store.status()
    if status is None:
        detail = f"{s.server} did not answer status: {_last(ctx)}"
        said = ctx.server_said()
        if said:
            detail += f"; the server said: {said} (all it said: {ctx.server_log})"
        if re.search(r"ENOENT|[Uu]nknown (MCP )?server|not found in", detail):
            detail += (
                "; `memfuse doctor --install-config FILE` adds a ready entry for it to an"
                " mcporter config"
            )
        checks.append(Check("server", False, detail))
    else:
        by_type = ", ".join(f"{k} {v}" for k, v in sorted(status.by_type.items()))
        total = status.total if status.total is not None else "?"
        checks.append(Check("server", True, f"{s.server}: {total} memories ({by_type or 'empty'})"))
        checks += _tool_checks(ctx, status, extra)
        index = _index_health(ctx)
        if index is not None:
            checks.append(index)
    return True


# Where the npm commands of the README (and npm's usual global prefixes) put agent-memory.
SERVER_JS = "@smyslenny/agent-memory/dist/mcp/server.js"
NPM_ROOTS = (
    "~/.local/share/agent-memory/node_modules",
    "~/.npm-global/lib/node_modules",
    "/usr/local/lib/node_modules",
    "/usr/lib/node_modules",
)
# Where the README builds it from its source release when the package registry has no copy.
SOURCE_ROOT = "~/.local/share/agent-memory/src"
SOURCE_JS = "dist/mcp/server.js"


def installed_how(server_js: str) -> str:
    """How agent-memory's server.js came to be there, for doctor to say."""
    if "node_modules/@smyslenny/agent-memory/" in server_js.replace("\\", "/"):
        return "the npm package"
    return "built from its source, not the npm package"


@dataclass(frozen=True)
class ServerSetup:
    """How to start agent-memory: where its server.js is and which generation it is."""

    server_js: Path | None = None  # None: looked for under NPM_ROOTS
    version: str | None = None  # None: read from its package.json


def server_entry(
    settings: Settings, home: Path, setup: ServerSetup
) -> tuple[dict[str, Any], list[str]]:
    """A ready mcporter entry for agent-memory, and what the reader should know about it.

    The entry turns off 3.x+'s own ingestion of ~/.openclaw/workspace (memfuse syncs it), and
    for 4.x and 5.x raises the capacities the surface window needs (docs/operations.md: a
    journal writes ~15 events a day; 5.x keeps 50 by default, 4.x 200 memories in all)."""
    if setup.server_js is not None:
        found = setup.server_js.expanduser().absolute()
        if not found.is_file():
            raise ConfigError(f"--server-js {setup.server_js}: no such file")
    else:
        candidates = [Path(root.replace("~", str(home), 1)) / SERVER_JS for root in NPM_ROOTS]
        candidates.append(Path(SOURCE_ROOT.replace("~", str(home), 1)) / SOURCE_JS)
        looked = next((c for c in candidates if c.is_file()), None)
        if looked is None:
            raise ConfigError(
                f"agent-memory's server.js was not found under {', '.join(NPM_ROOTS)} or"
                f" {SOURCE_ROOT}: install it (npm install --prefix ~/.local/share/agent-memory"
                " @smyslenny/agent-memory, or from its source release as the README shows) or"
                " give its path with --server-js"
            )
        found = looked
    notes: list[str] = []
    version = setup.version or _package_version(found)
    major = _major(version)
    env = {
        "AGENT_MEMORY_DB": str(home / ".openclaw" / "agent-memory.db"),
        "AGENT_MEMORY_AUTO_INGEST": "0",
    }
    events = 15 * settings.surface.window_days * 2  # twice what the window's journals write
    if major is not None and major >= 5:
        env["AGENT_MEMORY_MAX_EVENT"] = str(max(50, events))
        env["AGENT_MEMORY_MAX_MEMORIES"] = str(max(350, events + 300))
    elif major == 4:
        env["AGENT_MEMORY_MAX_MEMORIES"] = str(max(200, events + 150))
    if major is None:
        notes.append(
            "agent-memory's version is unknown (no package.json beside server.js, no"
            " --server-version): the entry sets no capacity; doctor checks it once it runs"
        )
    node = shutil.which("node") or "node"
    entry = {"command": node, "args": [str(found)], "env": env}
    if version:
        notes.append(f"agent-memory {version} at {found} ({installed_how(str(found))})")
    return entry, notes


def _package_version(server_js: Path) -> str | None:
    """The version in the package.json of the package server.js belongs to (dist/mcp/…)."""
    for folder in list(server_js.parents)[:4]:
        candidate = folder / "package.json"
        try:
            data = load_json(read_config(candidate), limit=CONFIG_MAX)
        except (OSError, ValueError, ConfigError):
            continue
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            return str(data["version"])[:40]
    return None


def _major(version: str | None) -> int | None:
    found = re.match(r"\s*v?(\d+)", version or "")
    return int(found[1]) if found else None


def print_config(ctx: RunContext, setup: ServerSetup) -> CommandResult:
    """A new mcporter config holding only agent-memory's entry (for a file of memfuse's own;
    `--install-config` adds the entry to an existing file instead)."""
    home = Path(os.environ.get("HOME") or Path.home())
    entry, notes = server_entry(ctx.settings, home, setup)
    for note in notes:
        ctx.reporter.info(note)
    config = {"mcpServers": {ctx.settings.server: entry}}
    text = json.dumps(config, indent=2)
    data: PrintConfigData = {"mcporter_config": config, "text": text}
    return CommandResult("doctor", data, payload=text)


def install_config(ctx: RunContext, setup: ServerSetup, target: Path) -> CommandResult:
    """Add (or replace) agent-memory's entry in an mcporter config, keeping every other server
    and setting; the file as it was is kept beside it and the change shown as a diff, with
    every server's secrets masked (memfuse.commands.install_config)."""
    from memfuse.commands import install_config as merge

    home = Path(os.environ.get("HOME") or Path.home())
    entry, notes = server_entry(ctx.settings, home, setup)
    found, changes = merge.install(target, ctx.settings.server, entry)
    changes = notes + changes + _database_folder(entry)
    data: InstallConfigData = {"path": found["path"], "backup": found["backup"],
                               "entry": found["entry"], "changes": changes}  # fmt: skip
    return CommandResult("doctor", data, tuple(render.install_config(data)))


def _database_folder(entry: dict[str, Any]) -> list[str]:
    """The folder of the store's database, made when the entry names one that is not there
    (agent-memory does not make it: its server would die on `unable to open database file`)."""
    db = entry.get("env", {}).get("AGENT_MEMORY_DB")
    folder = Path(db).parent if isinstance(db, str) and db else None
    if folder is None or folder.is_dir():
        return []
    try:
        folder.mkdir(mode=0o700, parents=True)
    except OSError as exc:
        raise ConfigError(f"cannot make {folder} for the store's database: {exc}") from None
    return [f"made {folder}, the folder of the store's database"]


def _tool_checks(ctx: RunContext, status: StoreStatus, extra: dict[str, int]) -> list[Check]:
    """The tools memfuse needs, the generation they reveal, and that generation's limits."""
    store = ctx.store
    try:
        offered = store.tools()
    except StoreError as exc:
        return [Check("tools", False, str(exc))]
    missing = [t for t in NEEDED_TOOLS if t not in offered]
    checks = [
        Check("tools", not missing,
              "all of " + ", ".join(NEEDED_TOOLS) if not missing
              else "missing: " + ", ".join(missing))
    ]  # fmt: skip
    generation = store.generation()
    assert generation is not None  # its tools were listed just now
    extra["generation"] = generation.number
    state = ctx.workspace.state
    if state.exists():
        with contextlib.suppress(OSError, MemfuseError):
            note_generation(state, generation.number, ctx.settings.now)
    checks.append(Check("generation", True, f"agent-memory {generation.number}.x", False))
    return checks + _capacity(ctx, status) + _auto_ingest(ctx, generation.number)


def _capacity(ctx: RunContext, status: StoreStatus) -> list[Check]:
    """Warn when the store keeps fewer memories of a type than the journals of the surface
    window hold: reflect would evict (5.x: archive) the rest, journals included."""
    limits = ctx.store.limits(status)
    if not limits:
        return []
    produced = _window_types(ctx)
    produced["total"] = sum(produced.values())
    short = [name for name in limits if produced.get(name, 0) > limits[name]]
    if not short:
        return [Check("capacity", True, f"limits {limits} hold the surface window", False)]
    days = ctx.settings.surface.window_days
    detail = (
        "; ".join(
            f"{name}: keeps {limits[name]}, the journals of the last {days} days hold"
            f" {produced.get(name, 0)}"
            for name in short
        )
        + f": reflect will evict the rest; raise {ctx.store.limit_variables(short)} in the"
        " server's env (the mcporter config entry)"
    )
    return [Check("capacity", False, detail, False)]


def _window_types(ctx: RunContext) -> dict[str, int]:
    s = ctx.settings
    start = s.now.date() - timedelta(days=s.surface.window_days - 1)
    window = ctx.workspace.window(start, s.now.date())
    counts: Counter[str] = Counter(
        ctx.classifier.classify(bullet.text).type
        for journal in ctx.workspace.journals(window, ctx.reporter.warn)
        for bullet in journal.bullets
    )
    return dict(counts)


def _auto_ingest(ctx: RunContext, generation: int) -> list[Check]:
    """3.x–5.x ingest a workspace on their own unless AGENT_MEMORY_AUTO_INGEST=0."""
    found = ctx.store.auto_ingest()
    if found is None:
        return []  # 2.x, or an entry memfuse cannot read (HTTP, an import): nothing to say
    if not found.on:
        return [Check("auto-ingest", True, "off (AGENT_MEMORY_AUTO_INGEST=0)", False)]
    home = os.environ.get("HOME") or str(Path.home())
    watched = found.watched or str(Path(home) / ".openclaw" / "workspace")
    if Path(watched).expanduser().absolute() != ctx.settings.workspace:
        return [
            Check("auto-ingest", True, f"on, but it watches {watched}, not this workspace", False)
        ]
    detail = (
        f"agent-memory {generation}.x ingests {watched} by itself, behind memfuse's back (the"
        " same journals twice): set AGENT_MEMORY_AUTO_INGEST=0 in the server entry's env"
    )
    return [Check("auto-ingest", False, detail, False)]


def _index_health(ctx: RunContext) -> Check | None:
    """The ledger against the store's journal URIs (read-only: nothing is marked)."""
    state = ctx.workspace.state
    if not state.ledger.exists():
        return None
    listed = ctx.store.uris_under(JOURNAL_PREFIXES)
    if listed is None:
        return Check("index", False, "the store's journal URIs could not be listed", False)
    ledger = Ledger(state)
    try:
        entries = ledger.all_entries()
    finally:
        ledger.close()
    report = judge(entries, listed, ctx.settings.now)
    outcomes = Counter(e.outcome for e in entries)
    runs, _problem = History(state).load()
    pending = runs["sync"][-1].counts.get("failed", 0) if runs["sync"] else 0
    detail = (
        f"{report.expected} in the ledger at journal URIs, {report.present} in the store,"
        f" {len(report.lost)} lost, {len(report.forgotten) + outcomes['forgotten']} forgotten"
        f" by the store's decay, {pending} pending retry,"
        f" {outcomes['rejected']} rejected by the gate"
    )
    if report.lost:
        detail += "; `memfuse sync --verify` re-sends the lost ones"
    return Check("index", not report.lost, detail, critical=False)


def _server_entry_check(ctx: RunContext) -> Check | None:
    """The mcporter config the store's entry is read from: present, JSON, and holding the
    server. An empty or broken file is a FAIL with the fix, not a transport error later."""
    s = ctx.settings
    if s.session_server is not None:
        return None  # the [session] table names the server itself
    path = mcporter_config_path(s, os.environ)
    fix = f"`memfuse doctor --install-config {path or '~/.mcporter/mcporter.json'}`"
    if path is None:
        return Check(
            "mcporter-config", False,
            f"none given or found (~/.mcporter/mcporter.json): {fix} writes one with the"
            f" {s.server} entry", critical=False,
        )  # fmt: skip
    try:
        raw = read_config(path)
    except FileNotFoundError:
        return Check("mcporter-config", False, f"{path} does not exist; {fix} writes it")
    except (OSError, ConfigError) as exc:
        return Check("mcporter-config", False, f"{path} cannot be read: {exc}; {fix}")
    if not raw.strip():
        return Check("mcporter-config", False, f"{path} is empty; {fix} writes the entry")
    try:
        data = load_json(strip_jsonc(raw), limit=CONFIG_MAX)
    except ValueError as exc:
        return Check("mcporter-config", False, f"{path} is not JSON ({exc}); fix it, or {fix}")
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not isinstance(servers.get(s.server), dict):
        named = sorted(servers) if isinstance(servers, dict) else []
        return Check(
            "mcporter-config", False,
            f"{path} has no server {s.server!r} (it has {named or 'none'}); {fix} adds it"
            " beside the others",
        )  # fmt: skip
    entry = servers[s.server]
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    script = next((str(a) for a in args if str(a).endswith("server.js")), None)
    how = f" {script} ({installed_how(script)})" if script else ""
    return Check(
        "mcporter-config", True, f"{path}: {s.server} → {entry.get('command')}{how}", False
    )


def _last(ctx: RunContext) -> str:
    return ctx.reporter.warnings[-1] if ctx.reporter.warnings else "no answer"


def _result(
    ctx: RunContext,
    checks: list[Check],
    extra: dict[str, int] | None = None,
    *,
    show_config: bool = False,
) -> CommandResult:
    failed = [c for c in checks if c.critical and not c.ok]
    data: DoctorData = {
        "checks": [c.as_dict() for c in checks],
        "config": dict(ctx.settings.describe()),
        "config_shown": show_config,
    }
    if extra and "generation" in extra:
        data["generation"] = extra["generation"]
    if failed:
        data["error"] = "critical check(s) failed: " + "; ".join(
            f"{c.name}: {c.detail}" for c in failed
        )
    code = ExitCode.FATAL if failed else ExitCode.OK
    if not ctx.settings.workspace.is_dir():
        code = ExitCode.NO_WORKSPACE  # the same code as every other command gives it
    return CommandResult(
        command="doctor", data=data, human=tuple(render.doctor(data)), exit_code=code
    )
