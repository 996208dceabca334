"""`memfuse doctor`: check each dependency and show the effective configuration."""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass

from memfuse.config import mask_secret
from memfuse.context import RunContext
from memfuse.errors import ExitCode
from memfuse.gateway import GatewayError, McporterGateway
from memfuse.journal_files import list_journals
from memfuse.output import CommandResult

NEEDED_TOOLS = ("remember", "recall", "recall_path", "reflect", "status", "forget")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    critical: bool = True

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "critical": self.critical}


def run(ctx: RunContext) -> CommandResult:
    s = ctx.settings
    checks: list[Check] = []
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
        checks.append(Check("server", False, f"{s.server} did not answer status: {_last(ctx)}"))
    else:
        by_type = ", ".join(f"{k} {v}" for k, v in sorted(status.get("by_type", {}).items()))
        total = status.get("total", "?")
        checks.append(Check("server", True, f"{s.server}: {total} memories ({by_type or 'empty'})"))
        try:
            offered = ctx.guard.gateway.list_tools()
        except GatewayError as exc:
            checks.append(Check("tools", False, str(exc)))
        else:
            missing = [t for t in NEEDED_TOOLS if t not in offered]
            checks.append(
                Check("tools", not missing,
                      "all of " + ", ".join(NEEDED_TOOLS) if not missing
                      else "missing: " + ", ".join(missing))
            )  # fmt: skip
    rr = s.rerank
    detail = (
        f"{rr.provider} {rr.model} at {rr.base_url}, key {mask_secret(rr.api_key)}"
        if rr.enabled
        else f"disabled (provider {rr.provider}, key {mask_secret(rr.api_key)})"
    )
    checks.append(Check("reranker", True, detail, critical=False))
    return _result(ctx, checks)


def _last(ctx: RunContext) -> str:
    return ctx.reporter.warnings[-1] if ctx.reporter.warnings else "no answer"


def _result(ctx: RunContext, checks: list[Check]) -> CommandResult:
    failed = [c for c in checks if c.critical and not c.ok]
    human = [
        f"{'ok  ' if c.ok else 'FAIL' if c.critical else 'warn'}  {c.name:<9} {c.detail}"
        for c in checks
    ]
    human.append("")
    human += [f"  {name} = {value}" for name, value in ctx.settings.describe()]
    data: dict[str, object] = {
        "checks": [c.as_dict() for c in checks],
        "config": dict(ctx.settings.describe()),
    }
    if failed:
        data["error"] = "critical check(s) failed: " + "; ".join(
            f"{c.name}: {c.detail}" for c in failed
        )
    return CommandResult(
        command="doctor",
        data=data,
        human=tuple(human),
        exit_code=ExitCode.FATAL if failed else ExitCode.OK,
    )
