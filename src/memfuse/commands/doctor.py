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
from memfuse.ledger.ledger import LEDGER_NAME, Ledger
from memfuse.ledger.reconcile import judge, listed_uris
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.history import History, note_generation
from memfuse.run.output import CommandResult
from memfuse.run.results import CheckRow, DoctorData, PrintConfigData
from memfuse.settings import mask_secret
from memfuse.store.connect import choose_transport
from memfuse.store.gateway import GatewayError, McporterGateway
from memfuse.store.generations import generation_of
from memfuse.text.classify import Classifier
from memfuse.workspace.journals import list_journals, read_journal

NEEDED_TOOLS = ("remember", "recall", "recall_path", "reflect", "status", "forget")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    critical: bool = True

    def as_dict(self) -> CheckRow:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "critical": self.critical}


def run(ctx: RunContext) -> CommandResult:
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
    journals = list_journals(ws)
    checks.append(
        Check(
            "journals",
            bool(journals),
            f"{len(journals)} journal(s), newest {max(journals)}"
            if journals
            else f"no memory/YYYY-MM-DD.md under {ws}",
            critical=False,
        )
    )
    files = " + ".join(str(p) for p in s.config_files) or "defaults (no file)"
    checks.append(Check("config", not s.config_refused, files, critical=False))

    gateway = ctx.guard.gateway
    why = ctx.transport_why or choose_transport(s)[1]
    checks.append(Check("transport", True, f"{gateway.name} ({why})", False))
    if isinstance(gateway, McporterGateway):
        version = gateway.version()
        where = shutil.which(shlex.split(s.mcporter)[0]) or "not on PATH"
        detail = (
            f"{version} ({s.mcporter}; {where})"
            if version
            else f"mcporter not found or not runnable: {s.mcporter!r}"
        )
        checks.append(Check("mcporter", version is not None, detail))
        if version is None:
            return _result(ctx, checks)
    status = ctx.guard.call("status", {})
    if status is None:
        detail = f"{s.server} did not answer status: {_last(ctx)}"
        if re.search(r"ENOENT|[Uu]nknown (MCP )?server|not found in", detail):
            detail += "; `memfuse doctor --print-config` prints a ready mcporter config for it"
        checks.append(Check("server", False, detail))
    else:
        by_type = ", ".join(f"{k} {v}" for k, v in sorted(status.get("by_type", {}).items()))
        total = status.get("total", "?")
        checks.append(Check("server", True, f"{s.server}: {total} memories ({by_type or 'empty'})"))
        checks += _tool_checks(ctx, status, extra)
        index = _index_health(ctx)
        if index is not None:
            checks.append(index)
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
    return _result(ctx, checks, extra)


# Where the npm commands of the README (and npm's usual global prefixes) put agent-memory.
SERVER_JS = "@smyslenny/agent-memory/dist/mcp/server.js"
NPM_ROOTS = (
    "~/.local/share/agent-memory/node_modules",
    "~/.npm-global/lib/node_modules",
    "/usr/local/lib/node_modules",
    "/usr/lib/node_modules",
)


def mcporter_config(server: str, home: Path) -> tuple[dict[str, Any], str | None]:
    """A ready mcporter config for agent-memory, and a note when its server.js was not found."""
    candidates = [Path(root.replace("~", str(home), 1)) / SERVER_JS for root in NPM_ROOTS]
    found = next((c for c in candidates if c.is_file()), None)
    node = shutil.which("node") or "node"
    entry = {
        "command": node,
        "args": [str(found or candidates[0])],
        "env": {
            "AGENT_MEMORY_DB": str(home / ".openclaw" / "agent-memory.db"),
            # 3.x and later ingest ~/.openclaw/workspace on their own, behind memfuse's back.
            "AGENT_MEMORY_AUTO_INGEST": "0",
        },
    }
    note = None
    if found is None:
        note = (
            f"agent-memory's server.js was not found under {', '.join(NPM_ROOTS)}; install it"
            f" (npm install --prefix ~/.local/share/agent-memory @smyslenny/agent-memory) or"
            f" edit the path in args"
        )
    return {"mcpServers": {server: entry}, "imports": []}, note


def print_config(ctx: RunContext) -> CommandResult:
    home = Path(os.environ.get("HOME") or Path.home())
    config, note = mcporter_config(ctx.settings.server, home)
    if note:
        ctx.reporter.warn(note)
    text = json.dumps(config, indent=2)
    data: PrintConfigData = {"mcporter_config": config, "text": text}
    return CommandResult("doctor", data, payload=text)


def _tool_checks(ctx: RunContext, status: dict[str, Any], extra: dict[str, int]) -> list[Check]:
    """The tools memfuse needs, the generation they reveal, and that generation's limits."""
    s = ctx.settings
    try:
        offered = ctx.guard.gateway.list_tools()
    except GatewayError as exc:
        return [Check("tools", False, str(exc))]
    missing = [t for t in NEEDED_TOOLS if t not in offered]
    checks = [
        Check("tools", not missing,
              "all of " + ", ".join(NEEDED_TOOLS) if not missing
              else "missing: " + ", ".join(missing))
    ]  # fmt: skip
    generation = generation_of(offered)
    extra["generation"] = generation
    if s.state_dir.is_dir():
        with contextlib.suppress(OSError, MemfuseError):
            note_generation(s.state_dir, generation, s.now)
    checks.append(Check("generation", True, f"agent-memory {generation}.x", False))
    return checks + _capacity(ctx, status, generation) + _auto_ingest(ctx, generation)


def _capacity(ctx: RunContext, status: dict[str, Any], generation: int) -> list[Check]:
    """Warn when the store keeps fewer memories of a type than the journals of the surface
    window hold: reflect would evict (5.x: archive) the rest, journals included."""
    capacity = status.get("capacity")
    limits: dict[str, int] = {}
    if isinstance(capacity, dict):
        for name, entry in capacity.items():
            limit = entry.get("limit") if isinstance(entry, dict) else None
            if isinstance(limit, int) and not isinstance(limit, bool):
                limits[name] = limit
    elif generation == 4:
        limits["total"] = 200  # 4.x's AGENT_MEMORY_MAX_MEMORIES default; status does not say
    if not limits:
        return []
    produced = _window_types(ctx)
    produced["total"] = sum(produced.values())
    short = [
        f"{name}: keeps {limits[name]}, the journals of the last"
        f" {ctx.settings.surface.window_days} days hold {produced.get(name, 0)}"
        for name in limits
        if produced.get(name, 0) > limits[name]
    ]
    if not short:
        return [Check("capacity", True, f"limits {limits} hold the surface window", False)]
    variables = ", ".join(
        "AGENT_MEMORY_MAX_"
        + ("MEMORIES" if n.split(":")[0] == "total" else n.split(":")[0].upper())
        for n in short
    )
    detail = (
        "; ".join(short) + f": reflect will evict the rest; raise {variables} in the server's"
        " env (the mcporter config entry)"
    )
    return [Check("capacity", False, detail, False)]


def _window_types(ctx: RunContext) -> dict[str, int]:
    s = ctx.settings
    classifier = Classifier(s.knowledge_keywords, s.emotion_keywords)
    start = s.now.date() - timedelta(days=s.surface.window_days - 1)
    counts: Counter[str] = Counter()
    for day, path in list_journals(s.workspace).items():
        if start <= day <= s.now.date():
            with contextlib.suppress(FileNotFoundError):
                parsed = read_journal(ctx.files, path, ctx.reporter.warn)
                for bullet in parsed.bullets if parsed else ():
                    counts[classifier.classify(bullet.text).type] += 1
    return dict(counts)


def _auto_ingest(ctx: RunContext, generation: int) -> list[Check]:
    """3.x–5.x ingest the workspace on their own unless AGENT_MEMORY_AUTO_INGEST=0."""
    if generation < 3:
        return []
    from memfuse.store.server_entry import server_spec

    try:
        spec = server_spec(ctx.settings)
    except ConfigError:
        return []  # an entry memfuse cannot read (HTTP, an import): nothing to say
    env = spec.env
    if env.get("AGENT_MEMORY_AUTO_INGEST", "").strip().lower() in ("0", "false", "off"):
        return [Check("auto-ingest", True, "off (AGENT_MEMORY_AUTO_INGEST=0)", False)]
    home = env.get("HOME") or os.environ.get("HOME") or str(Path.home())
    watched = env.get("AGENT_MEMORY_WORKSPACE") or str(Path(home) / ".openclaw" / "workspace")
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
    state = ctx.settings.state_dir
    if not (state / LEDGER_NAME).exists():
        return None
    listed = listed_uris(ctx.guard)
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


def _last(ctx: RunContext) -> str:
    return ctx.reporter.warnings[-1] if ctx.reporter.warnings else "no answer"


def _result(
    ctx: RunContext, checks: list[Check], extra: dict[str, int] | None = None
) -> CommandResult:
    failed = [c for c in checks if c.critical and not c.ok]
    data: DoctorData = {
        "checks": [c.as_dict() for c in checks],
        "config": dict(ctx.settings.describe()),
    }
    if extra and "generation" in extra:
        data["generation"] = extra["generation"]
    if failed:
        data["error"] = "critical check(s) failed: " + "; ".join(
            f"{c.name}: {c.detail}" for c in failed
        )
    return CommandResult(
        command="doctor",
        data=data,
        human=tuple(render.doctor(data)),
        exit_code=ExitCode.FATAL if failed else ExitCode.OK,
    )
