"""Where the store's server is: mcporter's config entry (JSONC, `${VAR}` expanded; from
`--mcporter-config`, `$MCPORTER_CONFIG`, then `~/.mcporter/mcporter.json[c]`) or memfuse's
`[session]` table, read into a `ServerSpec`."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memfuse.confine import UnsafePath, read_file
from memfuse.errors import ConfigError
from memfuse.settings import SessionServer, Settings
from memfuse.store.gateway.base import ServerSpec
from memfuse.untrusted import load_json

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


CONFIG_MAX = 4 * 1024 * 1024  # an mcporter config is a few KiB; this bounds a hostile one


def read_config(path: Path) -> str:
    """An mcporter config's text: a regular file (a FIFO or a device would hang or flood the
    read), at most CONFIG_MAX bytes, UTF-8. A link is followed wherever it leads: dotfiles are
    often linked in from elsewhere. FileNotFoundError when there is none; ConfigError else."""
    try:
        raw = read_file(Path("/"), path.absolute(), CONFIG_MAX)
    except UnsafePath as exc:
        raise ConfigError(str(exc)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text: {exc}") from None


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas → JSON (strings are left intact, byte for byte:
    a comma before a bracket inside a value is the value's)."""
    out: list[str] = []
    comma: int | None = None  # where in `out` the last comma outside strings went
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            comma, i = None, j + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)  # not `in text[i:]`: a copy per comment is quadratic
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            if c in "}]" and comma is not None:
                out[comma] = ""  # a trailing comma
            if not c.isspace():
                comma = len(out) if c == "," else None
            out.append(c)
            i += 1
    return "".join(out)


def servers_in(config: Path | None) -> dict[str, Any]:
    """Every server entry of an mcporter config, as written ({}: none, or it cannot be read)."""
    try:
        found = load_json(strip_jsonc(read_config(config)), limit=CONFIG_MAX) if config else {}
    except (OSError, ValueError, ConfigError):
        return {}
    servers = found.get("mcpServers") if isinstance(found, dict) else None
    return dict(servers) if isinstance(servers, dict) else {}


def expand(value: str, env: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}`, as mcporter expands them."""
    return _VAR.sub(lambda m: env.get(m[1]) or (m[2] if m[2] is not None else ""), value)


def mcporter_config_path(settings: Settings, env: Mapping[str, str]) -> Path | None:
    if settings.mcporter_config is not None:
        return settings.mcporter_config
    if env.get("MCPORTER_CONFIG"):
        return Path(env["MCPORTER_CONFIG"])
    home = Path(env.get("HOME", "~")).expanduser() / ".mcporter"
    for name in ("mcporter.json", "mcporter.jsonc"):
        if (home / name).is_file():
            return home / name
    return None


def server_spec(settings: Settings, env: Mapping[str, str] | None = None) -> ServerSpec:
    """Where the session transport's server comes from: [session] config, else mcporter's."""
    env = os.environ if env is None else env
    own: SessionServer | None = settings.session_server
    if own is not None:
        cwd = str(Path(own.cwd).expanduser()) if own.cwd else None
        if cwd is not None and not os.path.isabs(cwd):
            raise ConfigError(f"[session] cwd must be an absolute path, not {own.cwd!r}")
        return ServerSpec(own.command, own.args, dict(own.env), cwd)
    path = mcporter_config_path(settings, env)
    if path is None:
        raise ConfigError(
            "the session transport needs the server's command: give --mcporter-config or a"
            " [session] table in the memfuse config"
        )
    try:
        data = load_json(strip_jsonc(read_config(path)), limit=CONFIG_MAX)
        entry = data["mcpServers"][settings.server]
        command = expand(str(entry["command"]), env)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"cannot read server {settings.server!r} from mcporter config {path}: {exc!r}"
        ) from None
    return ServerSpec(
        command=command,
        args=tuple(expand(str(a), env) for a in entry.get("args", [])),
        env={k: expand(str(v), env) for k, v in (entry.get("env") or {}).items()},
        cwd=_entry_cwd(entry.get("cwd"), path, env),
    )


def _entry_cwd(cwd: object, config: Path, env: Mapping[str, str]) -> str:
    """Where mcporter runs the server: its `cwd` (`~` expanded, relative to the config's
    folder), else the config's folder. Never memfuse's own working folder."""
    folder = config.absolute().parent
    if not cwd:
        return str(folder)
    return os.path.normpath(folder / Path(expand(str(cwd), env)).expanduser())
