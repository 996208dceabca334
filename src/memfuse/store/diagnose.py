"""Why the store cannot be reached, named the one way `doctor` and every run name it.

Each check reads only files memfuse's own settings name, never the workspace: nothing the
agent writes can make a store that is down pass for a store that is not set up.
"""

from __future__ import annotations

import difflib
import functools
import itertools
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
    """One line of doctor's report (and a named cause of a run that reached no store)."""

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
    server (a FAIL with the fix); None when a `[session]` table names the server itself."""
    s = settings
    if s.session_server is not None:
        return None
    path = mcporter_config_path(s, env)
    fix = f"`memfuse doctor --install-config {path or '~/.mcporter/mcporter.json'}`"
    failed = functools.partial(Check, "mcporter-config", False)
    if path is None:
        return failed(
            f"none given or found (~/.mcporter/mcporter.json): {fix} writes one with the"
            f" {s.server} entry",
            critical=False,
        )
    try:
        raw = read_config(path)
    except FileNotFoundError:
        near = close_file(path)
        if near is not None:  # a typo: writing a config at the mistyped path is no fix
            return failed(f"{path} does not exist; did you mean {near}?")
        return failed(f"{path} does not exist; {fix} writes it")
    except (OSError, ConfigError) as exc:
        return failed(f"{path} cannot be read: {exc}; {fix}")
    if not raw.strip():
        return failed(f"{path} is empty; {fix} writes the entry")
    try:
        data = load_json(strip_jsonc(raw), limit=CONFIG_MAX)
    except ValueError as exc:
        return failed(f"{path} is not JSON ({exc}); fix it, or {fix}")
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not isinstance(servers.get(s.server), dict):
        named = sorted(servers)[:20] if isinstance(servers, dict) else []
        base = next((str(n) for n in named if s.server.startswith(f"{n}-")), None)
        if base is not None:  # an agent's own entry, made from `base` (schedule/agents.py)
            return failed(
                f"{path} has no server {s.server!r}, one agent's own entry: `memfuse cron"
                f" --install --all-agents` writes it from {printable(base)[:100]!r}, with a"
                " database of the agent's own"
            )
        meant = difflib.get_close_matches(s.server, [str(n) for n in named], n=1, cutoff=0.75)
        if meant:
            return failed(
                f"{path} has no server {s.server!r}; did you mean {meant[0]!r}?"
                f" (--server {printable(meant[0])[:100]})"
            )
        return failed(
            f"{path} has no server {s.server!r} (it has {named or 'none'}); {fix} adds it"
            " beside the others"
        )
    entry = servers[s.server]
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    script = next((str(a) for a in args if str(a).endswith("server.js")), None)
    how = f" {script} ({installed_how(script)})" if script else ""
    return Check(
        "mcporter-config", True, f"{path}: {s.server} → {entry.get('command')}{how}", False
    )


NEAR_LOOKED_AT = 500  # names of a config's folder compared with a mistyped one, at most


def close_file(path: Path, *, folder: bool = False) -> Path | None:
    """The file (or folder) beside `path` with the closest name to its own, or None."""
    try:
        with os.scandir(path.parent) as entries:
            kind = os.DirEntry.is_dir if folder else os.DirEntry.is_file
            names = [e.name for e in itertools.islice(entries, NEAR_LOOKED_AT) if kind(e)]
    except OSError:
        return None
    near = difflib.get_close_matches(path.name, names, n=1, cutoff=0.8)
    return path.parent / near[0] if near else None


def bridge_check(settings: Settings, version: str | None) -> Check:
    """mcporter itself, from the version it gave (None: it could not be run)."""
    where = shutil.which(shlex.split(settings.mcporter or "mcporter")[0]) or "not on PATH"
    detail = (
        f"{version} ({settings.mcporter}; {where})"
        if version
        else f"mcporter not found or not runnable: {settings.mcporter!r}; install it"
        " (npm install --prefix ~/.local/share/mcporter mcporter@0.12.3) and give it with"
        " --mcporter"
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
    if said and NODE_ABI_WORDS in said:
        detail += f"; {abi_fix(settings, said)}"
    elif missing and missing.startswith("its script"):
        detail += f"; {_script_fix(settings)}"
    elif missing or re.search(r"ENOENT|[Uu]nknown (MCP )?server|not found in", detail):
        detail += f"; {INSTALL_HINT}"
    return detail


def _script_fix(settings: Settings) -> str:
    """How a server script that is not there is fixed: an entry naming the one the user has."""
    if settings.session_server is not None:
        return "name the server.js you have in the args of memfuse's [session] table"
    config = settings.mcporter_config or "~/.mcporter/mcporter.json"
    return (
        f"`memfuse doctor --install-config {config} --server-js PATH` writes its entry with"
        " the server.js you have"
    )


# Node's words when a native module was built for another Node (its ABI, NODE_MODULE_VERSION).
_ABI = re.compile(
    r"[Tt]he module '(?P<module>[^'\n]{1,400})'.{0,200}?NODE_MODULE_VERSION (?P<built>\d{1,4})"
    r".{0,80}?requires\s+NODE_MODULE_VERSION (?P<wanted>\d{1,4})",
    re.DOTALL,
)
NODE_ABI_WORDS = "was built for another Node"
# NODE_MODULE_VERSION by Node's major version (nodejs.org's ABI table), to name the Node.
NODE_OF_ABI = {108: 18, 111: 19, 115: 20, 120: 21, 127: 22, 131: 23, 137: 24, 141: 25}


def node_abi(text: str) -> str | None:
    """A native module built for another Node, named from a server's stderr (Node says it
    over several lines, after the line `Error: The module '…'`); None when it is not that."""
    found = _ABI.search(text[-16384:])
    if found is None:
        return None

    def node(abi: str) -> str:
        major = NODE_OF_ABI.get(int(abi))
        return f"NODE_MODULE_VERSION {abi}" + (f", Node {major}" if major else "")

    return (
        f"its native module {printable(found['module'])} {NODE_ABI_WORDS}"
        f" ({node(found['built'])}); this Node requires {node(found['wanted'])}"
    )


def abi_fix(settings: Settings, said: str) -> str:
    """How a native module built for another Node is fixed: the Node it was built with, or
    the module rebuilt for this one (in the folder whose node_modules holds it: the innermost,
    as `npm install -g` puts a package's dependencies under its own)."""
    found = re.search(r"native module (.*)/node_modules/((?:@[^/ ]+/)?[^/ ]+)/", said)
    rebuild = f"`npm rebuild {found[2]}` in {found[1]}" if found else "`npm rebuild better-sqlite3`"
    config = settings.mcporter_config or "~/.mcporter/mcporter.json"
    return (
        "run the server with the Node it was built with (`memfuse doctor --install-config"
        f" {config} --server-js PATH` picks a Node that loads it), or rebuild it for this"
        f" Node: {rebuild}"
    )


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
        if missing is not None or (said is not None and NODE_ABI_WORDS in said):
            detail = server_detail(
                settings, last, asked="this run's calls", missing=missing, said=said, log=log
            )
            faults.append(Check("server", False, detail))
    return faults
