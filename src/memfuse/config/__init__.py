"""Settings, resolved in one place: command-line flag > environment > config file > default.

Only this package reads the environment and the config files (the option table: options.py)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from memfuse.config.options import (
    BY_TARGET,
    DOTTED,
    FILE_KEYS,
    FLAG_OPTIONS,
    OPTIONS,
    TRUSTED_KEYS,
    Option,
)
from memfuse.errors import ConfigError
from memfuse.host import workspace_in
from memfuse.report import arg_secrets
from memfuse.settings import Budget, RerankSettings, SessionServer, Settings
from memfuse.state.folder import default_state_dir
from memfuse.workspace.layout import Workspace

__all__ = [
    "BY_TARGET", "FILE_KEYS", "FLAG_OPTIONS", "OPTIONS", "TRUSTED_KEYS", "Option",
    "load_settings", "parse_config", "secrets_in",
]  # fmt: skip

WORKSPACE_CONFIG_LIMIT = 1 << 20  # bytes


def parse_config(text: str, path: Path) -> tuple[dict[str, Any], list[str]]:
    """Validate one config file's text into ({Settings field: value}, [problems])."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return {}, [f"config file {path} is not valid TOML: {exc}"]
    values: dict[str, Any] = {}
    problems: list[str] = []
    for name, value in raw.items():
        items = value.items() if isinstance(value, dict) and name != "workspace" else None
        for section, key, item in (
            ((name, k, v) for k, v in items) if items is not None else [("", name, value)]
        ):
            dotted = f"{section}.{key}" if section else key
            spec = FILE_KEYS.get((section, key))
            if spec is None:
                hint = did_you_mean(section, key)
                problems.append(f"config file {path}: unknown key '{dotted}'{hint}")
                continue
            target, check = spec
            try:
                values[target] = check(item)
            except TypeError as exc:
                problems.append(f"config file {path}: key '{dotted}' must be {exc}, got {item!r}")
    return values, problems


def did_you_mean(section: str, key: str) -> str:
    """`; did you mean 'surface.window_days'?` for a key one slip away from a real one (a
    letter too many, the right key in the wrong table); "" when none is close."""
    import difflib

    known = sorted(o.dotted for o in OPTIONS if o.key)
    dotted = f"{section}.{key}" if section else key
    close = difflib.get_close_matches(dotted, known, n=1, cutoff=0.8)
    if not close:  # the right name under another table, or at the top level
        by_key = {d.rsplit(".", 1)[-1]: d for d in known}
        near = difflib.get_close_matches(key, sorted(by_key), n=1, cutoff=0.8)
        close = [by_key[near[0]]] if near else []
    return f"; did you mean '{close[0]}'?" if close else ""


def read_config_file(path: Path) -> dict[str, Any]:
    """The user's own config file: trusted, and any problem in it is a usage error."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} cannot be read: {exc}") from None
    values, problems = parse_config(text, path)
    if problems:
        raise ConfigError(problems[0])
    return values


@dataclass(frozen=True)
class WorkspaceConfig:
    """What the workspace's config file may contribute: tunables, and what was refused."""

    values: dict[str, Any]
    notices: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


def read_workspace_config(workspace: Path, path: Path, user_file: Path) -> WorkspaceConfig:
    """The workspace's config file, read as attacker input (the agent writes it): a problem in
    it is a notice; a TRUSTED_KEYS key (what runs, where data goes) is not applied."""
    from memfuse.confine import UnsafePath, WorkspaceFiles

    try:
        raw = WorkspaceFiles(workspace, WORKSPACE_CONFIG_LIMIT).read(path)
    except FileNotFoundError:
        return WorkspaceConfig({})
    except UnsafePath as exc:
        return WorkspaceConfig({}, (f"{exc}; the workspace config is skipped",))
    values, problems = parse_config(raw.decode("utf-8", errors="replace"), path)
    notices = [f"{p}; skipped" for p in problems]
    refused = sorted(DOTTED[name] for name in values if DOTTED[name] in TRUSTED_KEYS)
    if refused:
        notices.append(
            f"{path} sets {', '.join(refused)}: not applied, since these choose what runs or"
            f" where data goes; set them with flags, MEMFUSE_* variables or {user_file}"
        )
    tunables = {k: v for k, v in values.items() if DOTTED[k] not in TRUSTED_KEYS}
    return WorkspaceConfig(tunables, tuple(notices), tuple(refused) + tuple(problems))


def defaults() -> dict[str, Any]:
    """Every setting's default, by Option target (nested tables as "table.field")."""
    found: dict[str, Any] = {}
    for f in fields(Settings):
        if f.default is not MISSING:
            found[f.name] = f.default
        elif f.default_factory is not MISSING:
            value = f.default_factory()
            for sub in fields(value):
                found[f"{f.name}.{sub.name}"] = getattr(value, sub.name)
    return found


def _lowered_only(local: WorkspaceConfig, user_values: Mapping[str, Any]) -> WorkspaceConfig:
    """The workspace's config with every limit it would raise left out: a limit (`limit`
    in OPTIONS) may only go down from what the user's file or the default sets."""
    base = {**defaults(), **user_values}
    raised = sorted(
        name for name, value in local.values.items()
        if BY_TARGET[name].limit and name in base and value > base[name]
    )  # fmt: skip
    if not raised:
        return local
    keys = ", ".join(f"{DOTTED[name]} = {local.values[name]!r}" for name in raised)
    notice = (
        f"the workspace config raises {keys}: not applied (the workspace may only lower a"
        " limit; set a higher one with a flag, a MEMFUSE_* variable or the user config file)"
    )
    values = {k: v for k, v in local.values.items() if k not in raised}
    refused = tuple(DOTTED[name] for name in raised)
    return WorkspaceConfig(values, (*local.notices, notice), local.refused + refused)


def parse_now(text: str | None) -> datetime:
    """The run's clock: `--now` when given (naive means local time), else the real time."""
    if text is None:
        return datetime.now().astimezone()
    from dateutil import parser as date_parser  # only replays pay for it

    try:
        parsed = date_parser.isoparse(text)
    except (ValueError, OverflowError):
        raise ConfigError(
            f"--now must be an ISO date-time such as 2026-02-21T22:05, got {text!r}"
        ) from None
    return parsed.astimezone() if parsed.tzinfo is None else parsed


def load_settings(
    flags: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> Settings:
    """Resolve settings: flags (None = not given) > env > config file > defaults; each flag
    (by Settings field, and "now") is checked by its Option."""
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    now_text = given.pop("now", None)
    flags = {name: _checked_flag(name, value) for name, value in given.items()}
    env = os.environ if env is None else env

    from_env: dict[str, Any] = {}
    for option in OPTIONS:
        if option.env and env.get(option.env):
            try:
                from_env[option.target] = option.from_env(env[option.env])
            except TypeError as exc:
                raise ConfigError(f"environment variable {option.env} must be {exc}") from None

    home = Path(env.get("HOME") or Path.home())
    xdg = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    user_file = Path(xdg) / "memfuse" / "config.toml"
    user_values = read_config_file(user_file) if user_file.is_file() else {}
    workspace_text = (
        flags.get("workspace")
        or from_env.get("workspace")
        or user_values.get("workspace")
        or str(workspace_in(home))
    )
    workspace = Path(str(workspace_text)).expanduser().absolute()
    meant = Workspace.meant_by(workspace)
    if meant is not None:  # it would read memory/memory/ and keep a second state folder
        raise ConfigError(
            f"workspace {workspace} is the journals' folder of the workspace {meant}, not a"
            f" workspace: give -w {meant} (or MEMFUSE_WORKSPACE={meant}); memfuse reads"
            f" {Workspace(meant).journal_dir}/YYYY-MM-DD.md itself"
        )
    workspace_file = Workspace(workspace).config_file
    local = _lowered_only(read_workspace_config(workspace, workspace_file, user_file), user_values)
    files = tuple(
        p for p, used in ((user_file, user_values), (workspace_file, local.values)) if used
    )
    file_values = {**user_values, **local.values}

    merged: dict[str, Any] = {**file_values, **from_env, **flags}
    merged.pop("workspace", None)
    state_text = merged.pop("state_dir", None)
    state_dir = (
        Path(str(state_text)).expanduser().absolute()
        if state_text
        else default_state_dir(workspace, env)
    )
    now = parse_now(now_text)

    tables: dict[str, dict[str, Any]] = {"rerank": {}, "session": {}, "surface": {}}
    for key in [k for k in merged if "." in k]:
        table, field = key.split(".", 1)
        tables[table][field] = merged.pop(key)
    session = tables["session"]
    if isinstance(merged.get("mcporter_config"), str):
        merged["mcporter_config"] = Path(merged["mcporter_config"]).expanduser().absolute()
    known = {f.name for f in fields(Settings)}
    unknown = set(merged) - known
    if unknown:
        raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    return Settings(
        workspace=workspace,
        state_dir=state_dir,
        now=now,
        rerank=_rerank_settings(tables["rerank"], env),
        session_server=SessionServer(**session) if "command" in session else None,
        surface=Budget(**tables["surface"]),
        config_files=files,
        config_notices=local.notices,
        config_refused=local.refused,
        **merged,
    )


def _checked_flag(name: str, value: Any) -> Any:
    option = BY_TARGET.get(name)
    if option is None or not option.flag:
        raise ConfigError(f"unknown setting: {name}")
    try:
        return option.from_env(value) if isinstance(value, str) else option.check(value)
    except TypeError as exc:
        raise ConfigError(f"{option.flag[0]} must be {exc}, got {value!r}") from None


def _rerank_settings(table: dict[str, Any], env: Mapping[str, str]) -> RerankSettings:
    """The [rerank] settings (AGENT_MEMORY_RERANK_* over the table, as OPTIONS reads them),
    the key from the environment alone, and the OPENAI_* fallbacks of the key and endpoint."""
    table["provider"] = table.get("provider", RerankSettings.provider).strip().lower()
    table["api_key"] = env.get("AGENT_MEMORY_RERANK_API_KEY") or env.get("OPENAI_API_KEY") or None
    url = env.get("AGENT_MEMORY_RERANK_BASE_URL") or env.get("OPENAI_BASE_URL")
    table["base_url"] = url or table.get("base_url", RerankSettings.base_url)
    return RerankSettings(**table)


SECRET_NAMES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")  # a session env value is masked


def secrets_in(settings: Settings, env: Mapping[str, str] | None = None) -> list[str]:
    """Every secret value a run must never print: the rerank key, a password or query value
    in its URL, the session server's env values, and any *_API_KEY or *_TOKEN."""
    env = os.environ if env is None else env
    found = {v for k, v in env.items() if k.upper().endswith(("_API_KEY", "_TOKEN")) and v}
    if settings.rerank.api_key:
        found.add(settings.rerank.api_key)
    if settings.session_server is not None:  # a server's token is passed in its env
        found.update(
            v for name, v in settings.session_server.env if name.upper().endswith(SECRET_NAMES)
        )
        found.update(arg_secrets(settings.session_server.args))  # `--api-key=…`, a DSN's
    url = urlsplit(settings.rerank.base_url)
    found.update(v for v in (url.password, *(v for _k, v in parse_qsl(url.query))) if v)
    return sorted((s for s in found if len(s) >= 6), key=len, reverse=True)
