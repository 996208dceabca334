"""Why the store cannot be reached, named the one way `doctor` and every run name it.

A run's store calls are best effort: when every one fails, the run asks these checks whether
the store's setup explains it — the mcporter config the run names is missing, empty, not JSON
or without the server; mcporter is not there; the server's program or script is not there —
and says so as doctor does (docs/decisions.md 262). Each check reads only files memfuse's own
settings name, never the workspace: nothing the agent writes can make a store that is down
pass for a store that is not set up.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memfuse.errors import ConfigError
from memfuse.settings import Settings
from memfuse.store.gateway import ServerSpec
from memfuse.store.server_entry import CONFIG_MAX, mcporter_config_path, read_config, strip_jsonc
from memfuse.untrusted import load_json, printable

# How the store's entry is fixed, whichever part of it is wrong.
INSTALL_HINT = (
    "`memfuse doctor --install-config FILE` adds a ready entry for it to an mcporter config"
)


@dataclass(frozen=True)
class Check:
    """One line of doctor's report (and one named cause of a run that could not reach the
    store): what was checked, whether it passed, what was found, and whether a failure stops."""

    name: str
    ok: bool
    detail: str
    critical: bool = True

    @property
    def fault(self) -> bool:
        return self.critical and not self.ok

    def line(self) -> str:
        return f"{self.name}: {self.detail}"


def installed_how(server_js: str) -> str:
    """How agent-memory's server.js came to be there, for doctor to say."""
    if "node_modules/@smyslenny/agent-memory/" in server_js.replace("\\", "/"):
        return "the npm package"
    return "built from its source, not the npm package"


def config_check(settings: Settings, env: Mapping[str, str]) -> Check | None:
    """The mcporter config the store's entry is read from: present, JSON, and holding the
    server. An empty or broken file is a FAIL with the fix, not a transport error later; None
    when a `[session]` table names the server itself."""
    s = settings
    if s.session_server is not None:
        return None
    path = mcporter_config_path(s, env)
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
        named = sorted(servers)[:20] if isinstance(servers, dict) else []
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


def bridge_check(settings: Settings, version: str | None) -> Check:
    """mcporter itself, from the version it gave (None: it could not be run)."""
    where = shutil.which(shlex.split(settings.mcporter or "mcporter")[0]) or "not on PATH"
    detail = (
        f"{version} ({settings.mcporter}; {where})"
        if version
        else f"mcporter not found or not runnable: {settings.mcporter!r}; install it"
        " (npm install --prefix ~/.local/share/mcporter mcporter) and give it with --mcporter"
    )
    return Check("mcporter", version is not None, detail)


# An argument of a server's entry that names the program it runs (node's script, python's).
_SCRIPT = re.compile(r"\.(?:c|m)?js$|\.py$")


def missing_program(server: ServerSpec | ConfigError) -> str | None:
    """What of the server's entry is not on this machine: its command, or the script it is
    given (`node /…/dist/mcp/server.js`); None when both are there (or nothing can be told)."""
    if not isinstance(server, ServerSpec):
        return None
    command = server.command
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = [command]
    program = argv[0] if argv else command
    if not program:
        return None
    found = (
        Path(program).is_file()
        if os.path.isabs(program)
        else shutil.which(program) is not None or "/" in program
    )
    if not found:
        where = "does not exist" if os.path.isabs(program) else "is not on this PATH"
        return f"its command {printable(program)[:300]} {where}"
    for arg in (*argv[1:], *server.args):
        if not _SCRIPT.search(arg) or arg.startswith("-"):
            continue
        path = Path(arg) if os.path.isabs(arg) else Path(server.cwd or "/") / arg
        if not path.is_file():
            return f"its script {printable(arg)[:300]} does not exist"
    return None


def server_detail(
    settings: Settings,
    last: str,
    *,
    asked: str,
    missing: str | None,
    said: str | None,
    log: Path | None,
) -> str:
    """Why the server did not answer, as doctor says it: the store's last word, what of its
    entry is missing, what it wrote on stderr, and the fix when its entry is the cause."""
    detail = f"{settings.server} did not answer {asked}: {last}"
    if missing:
        detail += f"; {missing}"
    if said:
        detail += f"; the server said: {said}"
        if log is not None:
            detail += f" (all it said: {log})"
    if missing or re.search(r"ENOENT|[Uu]nknown (MCP )?server|not found in", detail):
        detail += f"; {INSTALL_HINT}"
    return detail


def setup_faults(
    settings: Settings,
    server: ServerSpec | ConfigError,
    *,
    transport: str,
    bridge_version: Callable[[], str | None],
    last: str,
    said: str | None,
    log: Path | None,
    env: Mapping[str, str],
) -> list[Check]:
    """Why a run reached no store, when its setup is why (doctor's critical checks, in
    doctor's order); [] when the setup holds and the store itself is down."""
    faults: list[Check] = []
    entry = config_check(settings, env)
    if entry is not None and entry.fault:
        faults.append(entry)
    if transport == "mcporter":
        bridge = bridge_check(settings, bridge_version())
        if bridge.fault:
            faults.append(bridge)
    if not faults:
        missing = missing_program(server)
        if missing is not None:
            detail = server_detail(
                settings, last, asked="this run's calls", missing=missing, said=said, log=log
            )
            faults.append(Check("server", False, detail))
    return faults
