"""Settings, resolved in one place: command-line flag > environment > config file > default.

Only this module reads the environment and the config files. Everything else receives a
frozen `Settings` (memfuse.settings).
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from memfuse.errors import ConfigError
from memfuse.settings import (
    Budget,
    RerankSettings,
    SessionServer,
    Settings,
    Transport,
)
from memfuse.state.folder import default_state_dir
from memfuse.workspace.layout import Workspace

# --- the config file schema --------------------------------------------------------------

Validator = Callable[[Any], Any]  # a value → the value checked; TypeError says what it must be


def _string(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError("a non-empty string")
    return value


def _positive_number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise TypeError("a number greater than 0")
    if math.isinf(value) or math.isnan(value):
        raise TypeError("a finite number")
    return float(value)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError("a whole number ≥ 0")
    return value


def _positive_count(value: Any) -> int:
    if _count(value) < 1:
        raise TypeError("a whole number ≥ 1")
    return int(value)


def _file_mib(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
        raise TypeError("a whole number of MiB from 1 to 1024")
    return value


JOBS_MAX = 32  # concurrent store calls: each may be a process (mcporter peaks at ~75 MB)


def _jobs(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= JOBS_MAX:
        raise TypeError(f"a whole number from 1 to {JOBS_MAX}")
    return value


def _fraction(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise TypeError("a number between 0 and 1")
    return float(value)


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("true or false")
    return value


def _transport(value: Any) -> Transport:
    if value not in ("auto", "mcporter", "session"):
        raise TypeError("'auto', 'mcporter' or 'session'")
    return value  # type: ignore[no-any-return]


# A keyword list compiles into one regular expression per run: bounded, so that no list can
# make the compile (or the match on every bullet) take long.
KEYWORDS_MAX = 200
KEYWORD_CHARS = 64


def _keywords(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(k, str) and k.strip() for k in value):
        raise TypeError("a list of non-empty strings")
    if len(value) > KEYWORDS_MAX or any(len(k.strip()) > KEYWORD_CHARS for k in value):
        raise TypeError(f"at most {KEYWORDS_MAX} keywords of at most {KEYWORD_CHARS} characters")
    return tuple(k.strip() for k in value)


def _string_list(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
        raise TypeError("a list of strings")
    return tuple(value)


def _string_table(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise TypeError("a table of strings")
    return tuple(sorted(value.items()))


@dataclass(frozen=True)
class Option:
    """One setting, declared once: where it may come from and what it must be.

    `key` is its (section, key) in a config file (section "" is the top level), `env` its
    environment variable, `flag` its command-line declarations. A flag and a variable are
    checked like a file value. `trusted` keys choose what runs or where data and secrets go:
    the agent-written workspace config may not set them. `limit` keys bound what a run may
    spend or show (time, workers, bytes, lines): the workspace config may lower them, never
    raise them above what the user's own settings or the default give.
    """

    target: str  # the Settings field; "table.field" for a field of a nested table
    check: Validator
    key: tuple[str, str] | None = None
    env: str | None = None
    flag: tuple[str, ...] = ()
    flag_type: type = str
    help: str = ""
    shown_default: str | None = None  # how --help shows the default, when there is one
    trusted: bool = False
    numeric: bool = False  # text from a variable is read as a number first
    limit: bool = False

    @property
    def dotted(self) -> str:
        """The key as a config file spells it ("surface.top_n", "jobs"); "" for none."""
        return ".".join(k for k in self.key if k) if self.key else ""

    def from_env(self, text: str) -> Any:
        """Check a value given as text (a variable; a flag given as a string)."""
        return self.check(_as_number(text) if self.numeric else text)

    @property
    def flag_help(self) -> str:
        where = [f"env {self.env}"] if self.env else []
        if self.shown_default is not None:
            where.append(f"default {self.shown_default}")
        return f"{self.help} [{'; '.join(where)}]." if where else self.help


def _path_text(value: Any) -> str:
    return _string(str(value) if isinstance(value, Path) else value)


OPTIONS: tuple[Option, ...] = (
    Option("workspace", _path_text, ("", "workspace"), "MEMFUSE_WORKSPACE", ("--workspace", "-w"),
           Path, "Workspace folder", "~/.openclaw/workspace", trusted=True),
    Option("mcporter", _string, ("", "mcporter"), "MEMFUSE_MCPORTER", ("--mcporter",),
           str, "mcporter command", "mcporter", trusted=True),
    Option("mcporter_config", _path_text, ("", "mcporter_config"), "MEMFUSE_MCPORTER_CONFIG",
           ("--mcporter-config",), Path, "mcporter config file, passed as its --config",
           trusted=True),
    Option("server", _string, ("", "server"), "MEMFUSE_SERVER", ("--server",), str,
           "Server name in the mcporter config", "agent-memory", trusted=True),
    Option("transport", _transport, ("", "transport"), "MEMFUSE_TRANSPORT", ("--transport",),
           str, "auto, mcporter (a process per call) or session (one MCP session per run);"
           " auto takes session for a stdio server", "auto", trusted=True),
    Option("state_dir", _path_text, ("", "state_dir"), "MEMFUSE_STATE_DIR", ("--state-dir",),
           Path, "memfuse's own state folder (ledger, history, lock, logs)",
           "~/.local/state/memfuse/<workspace>", trusted=True),
    Option("timeout", _positive_number, ("", "timeout"), "MEMFUSE_TIMEOUT", ("--timeout",),
           float, "Seconds allowed per store call", "30", numeric=True, limit=True),
    Option("jobs", _jobs, ("", "jobs"), "MEMFUSE_JOBS", ("--jobs", "-j"), int,
           "Concurrent store calls", "4", numeric=True, limit=True),
    Option("max_file_mib", _file_mib, ("", "max_file_mib"), limit=True),
    Option("knowledge_keywords", _keywords, ("classify", "knowledge")),
    Option("emotion_keywords", _keywords, ("classify", "emotion")),
    Option("surface.window_days", _positive_count, ("surface", "window_days"), limit=True),
    Option("surface.fallback_days", _positive_count, ("surface", "fallback_days"), limit=True),
    Option("surface.top_n", _positive_count, ("surface", "top_n"), limit=True),
    Option("surface.emotion_cap", _count, ("surface", "emotion_cap"), limit=True),
    Option("surface.knowledge_cap", _count, ("surface", "knowledge_cap"), limit=True),
    Option("surface.event_cap", _count, ("surface", "event_cap"), limit=True),
    Option("surface.max_lines", _positive_count, ("surface", "max_lines"), limit=True),
    Option("surface.entry_chars", _positive_count, ("surface", "entry_chars"), limit=True),
    Option("surface.dedup_similarity", _fraction, ("surface", "dedup_similarity")),
    Option("memory_md_max_lines", _positive_count, ("tidy", "memory_md_max_lines"), limit=True),
    Option("consistent_similarity", _fraction, ("tidy", "consistent_similarity")),
    Option("related_similarity", _fraction, ("tidy", "related_similarity")),
    Option("archive_after_days", _positive_count, ("tidy", "archive_after_days")),
    # The reranker's variables (AGENT_MEMORY_RERANK_*, OPENAI_*) are agent-memory's own names
    # with fallbacks, read by _rerank_settings.
    Option("rerank.provider", _string, ("rerank", "provider"), trusted=True),
    Option("rerank.model", _string, ("rerank", "model"), trusted=True),
    Option("rerank.base_url", _string, ("rerank", "base_url"), trusted=True),
    Option("rerank.timeout", _positive_number, ("rerank", "timeout"), limit=True),
    # Whether surface's and tidy's recalls are reranked too (recall's always is): trusted,
    # since it decides whether their memories are sent to the reranker's endpoint.
    Option("rerank.surface", _boolean, ("rerank", "surface"), trusted=True),
    Option("rerank.tidy", _boolean, ("rerank", "tidy"), trusted=True),
    Option("alert_failed_runs", _positive_count, ("alert", "failed_runs"), trusted=True),
    Option("alert_max_age_hours", _positive_number, ("alert", "max_age_hours"), trusted=True),
    Option("session.command", _string, ("session", "command"), trusted=True),
    Option("session.args", _string_list, ("session", "args"), trusted=True),
    Option("session.env", _string_table, ("session", "env"), trusted=True),
    Option("session.cwd", _string, ("session", "cwd"), trusted=True),
)  # fmt: skip
BY_TARGET = {o.target: o for o in OPTIONS}
FLAG_OPTIONS = tuple(o for o in OPTIONS if o.flag)

# Views of the table, for the readers below.
FILE_KEYS: dict[tuple[str, str], tuple[str, Validator]] = {
    o.key: (o.target, o.check) for o in OPTIONS if o.key
}
TRUSTED_KEYS = frozenset(o.dotted for o in OPTIONS if o.trusted and o.key)
_DOTTED = {o.target: o.dotted for o in OPTIONS if o.key}


def _as_number(text: str) -> float | int:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise TypeError("a number") from None


def config_paths(workspace: Path, env: Mapping[str, str]) -> tuple[Path, Path]:
    """The workspace config file and the user config file."""
    xdg = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Workspace(workspace).config_file, Path(xdg) / "memfuse" / "config.toml"


# The workspace is written by the agent, so its config file may not set TRUSTED_KEYS: only
# flags, the environment and the user's own config file can. The rest are behaviour tunables.
WORKSPACE_CONFIG_LIMIT = 1 << 20


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
                problems.append(f"config file {path}: unknown key '{dotted}'")
                continue
            target, check = spec
            try:
                values[target] = check(item)
            except TypeError as exc:
                problems.append(f"config file {path}: key '{dotted}' must be {exc}, got {item!r}")
    return values, problems


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
    """The workspace's config file, read as attacker input.

    It may not stop memfuse: an unreadable file, bad TOML or a bad value is a warning and is
    skipped. A trusted key is not applied, and the notice names the file and the key.
    """
    from memfuse.confine import UnsafePath, WorkspaceFiles

    try:
        raw = WorkspaceFiles(workspace, WORKSPACE_CONFIG_LIMIT).read(path)
    except FileNotFoundError:
        return WorkspaceConfig({})
    except UnsafePath as exc:
        return WorkspaceConfig({}, (f"{exc}; the workspace config is skipped",))
    values, problems = parse_config(raw.decode("utf-8", errors="replace"), path)
    notices = [f"{p}; skipped" for p in problems]
    refused = sorted(_DOTTED[name] for name in values if _DOTTED[name] in TRUSTED_KEYS)
    if refused:
        notices.append(
            f"{path} sets {', '.join(refused)}: not applied, since these choose what runs or"
            f" where data goes; set them with flags, MEMFUSE_* variables or {user_file}"
        )
    tunables = {k: v for k, v in values.items() if _DOTTED[k] not in TRUSTED_KEYS}
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
    keys = ", ".join(f"{_DOTTED[name]} = {local.values[name]!r}" for name in raised)
    notice = (
        f"the workspace config raises {keys}: not applied (the workspace may only lower a"
        " limit; set a higher one with a flag, a MEMFUSE_* variable or the user config file)"
    )
    values = {k: v for k, v in local.values.items() if k not in raised}
    refused = tuple(_DOTTED[name] for name in raised)
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
    """Resolve settings: flags (None = not given) > env > config file > defaults.

    `flags` holds command-line values by Settings field (and "now"); each is checked by its
    Option like a value from the environment or a file.
    """
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
    user_file = config_paths(Path("."), env)[1]
    user_values = read_config_file(user_file) if user_file.is_file() else {}
    workspace_text = (
        flags.get("workspace")
        or from_env.get("workspace")
        or user_values.get("workspace")
        or str(home / ".openclaw" / "workspace")
    )
    workspace = Path(str(workspace_text)).expanduser().absolute()
    workspace_file = config_paths(workspace, env)[0]
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

    rerank = _rerank_settings(merged, env)
    session = _session_server(merged)
    surface = Budget(**{k.split(".", 1)[1]: merged[k] for k in merged if k.startswith("surface.")})
    for key in [k for k in merged if k.startswith(("rerank.", "session.", "surface."))]:
        merged.pop(key)
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
        rerank=rerank,
        session_server=session,
        surface=surface,
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


def _rerank_settings(values: Mapping[str, Any], env: Mapping[str, str]) -> RerankSettings:
    """AGENT_MEMORY_RERANK_* (with the OPENAI_* fallbacks) over the [rerank] table."""
    base = RerankSettings()
    provider = (
        env.get("AGENT_MEMORY_RERANK_PROVIDER") or values.get("rerank.provider") or base.provider
    )
    timeout_text = env.get("AGENT_MEMORY_RERANK_TIMEOUT")
    timeout = values.get("rerank.timeout", base.timeout)
    if timeout_text:
        try:
            timeout = _positive_number(_as_number(timeout_text))
        except TypeError as exc:
            raise ConfigError(
                f"environment variable AGENT_MEMORY_RERANK_TIMEOUT must be {exc}"
            ) from None
    return RerankSettings(
        provider=provider.strip().lower(),
        model=env.get("AGENT_MEMORY_RERANK_MODEL") or values.get("rerank.model") or base.model,
        api_key=env.get("AGENT_MEMORY_RERANK_API_KEY") or env.get("OPENAI_API_KEY") or None,
        base_url=(
            env.get("AGENT_MEMORY_RERANK_BASE_URL")
            or env.get("OPENAI_BASE_URL")
            or values.get("rerank.base_url")
            or base.base_url
        ),
        timeout=timeout,
        surface=values.get("rerank.surface", base.surface),
        tidy=values.get("rerank.tidy", base.tidy),
    )


def _session_server(values: Mapping[str, Any]) -> SessionServer | None:
    command = values.get("session.command")
    if command is None:
        return None
    return SessionServer(
        command=command,
        args=values.get("session.args", ()),
        env=values.get("session.env", ()),
        cwd=values.get("session.cwd"),
    )


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
    url = urlsplit(settings.rerank.base_url)
    found.update(v for v in (url.password, *(v for _k, v in parse_qsl(url.query))) if v)
    return sorted((s for s in found if len(s) >= 6), key=len, reverse=True)
