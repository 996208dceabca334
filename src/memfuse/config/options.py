"""The option table: every setting declared once (its config key, variable, flag, check and
whether the workspace may set it), and the checks a value must pass."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memfuse.host import WORKSPACE
from memfuse.settings import Transport

Validator = Callable[[Any], Any]  # a value → the value checked; TypeError says what it must be


def _string(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError("a non-empty string")
    return value


def positive_number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise TypeError("a number greater than 0")
    if math.isinf(value) or math.isnan(value):
        raise TypeError("a finite number")
    return float(value)


def _whole(low: int, high: float, words: str) -> Callable[[Any], int]:
    """The check of a whole number from `low` to `high`; `words` say what it must be."""

    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise TypeError(words)
        return value

    return check


JOBS_MAX = 32  # concurrent store calls: each may be a process (mcporter peaks at ~75 MB)
_count = _whole(0, math.inf, "a whole number ≥ 0")
_positive_count = _whole(1, math.inf, "a whole number ≥ 1")
_file_mib = _whole(1, 1024, "a whole number of MiB from 1 to 1024")
_jobs = _whole(1, JOBS_MAX, f"a whole number from 1 to {JOBS_MAX}")


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


def _semantic(value: Any) -> str:
    if value not in ("auto", "off"):
        raise TypeError("'auto' (the semantic extra's model when installed) or 'off'")
    return str(value)


# A keyword list compiles into one regular expression per run: bounded, so that no list can
# make the compile (or the match on every bullet) take long.
KEYWORDS_MAX = 500  # lexicon.txt holds ~300 emotion words: room to add to them
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
    """One setting, declared once (docs/architecture.md, "An option"): `key` is its (section,
    key) in a config file ("" the top level). `limit` keys bound what a run may spend or show:
    the workspace's config may lower them, never raise them above the user's or the default."""

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
        return self.check(as_number(text) if self.numeric else text)

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
           Path, "Workspace folder", WORKSPACE, trusted=True),
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
    Option("semantic", _semantic, None, "MEMFUSE_SEMANTIC"),
    Option("state_dir", _path_text, ("", "state_dir"), "MEMFUSE_STATE_DIR", ("--state-dir",),
           Path, "memfuse's own state folder (ledger, history, lock, logs)",
           "~/.local/state/memfuse/<workspace>", trusted=True),
    Option("timeout", positive_number, ("", "timeout"), "MEMFUSE_TIMEOUT", ("--timeout",),
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
    Option("surface.query", _string, ("surface", "query")),
    Option("surface.recall_limit", _positive_count, ("surface", "recall_limit"), limit=True),
    Option("surface.knowledge_listed", _count, ("surface", "knowledge_listed"), limit=True),
    Option("surface.emotion_listed", _count, ("surface", "emotion_listed"), limit=True),
    Option("memory_md_max_lines", _positive_count, ("tidy", "memory_md_max_lines"), limit=True),
    Option("consistent_similarity", _fraction, ("tidy", "consistent_similarity")),
    Option("related_similarity", _fraction, ("tidy", "related_similarity")),
    Option("archive_after_days", _positive_count, ("tidy", "archive_after_days")),
    # The reranker's variables are agent-memory's own names; the key's and the endpoint's, with
    # their OPENAI_* fallbacks, are read by _rerank_settings.
    Option("rerank.provider", _string, ("rerank", "provider"), "AGENT_MEMORY_RERANK_PROVIDER",
           trusted=True),
    Option("rerank.model", _string, ("rerank", "model"), "AGENT_MEMORY_RERANK_MODEL",
           trusted=True),
    Option("rerank.base_url", _string, ("rerank", "base_url"), trusted=True),
    Option("rerank.timeout", positive_number, ("rerank", "timeout"),
           "AGENT_MEMORY_RERANK_TIMEOUT", numeric=True, limit=True),
    # Whether surface's and tidy's recalls are reranked too (recall's always is): trusted,
    # since it decides whether their memories are sent to the reranker's endpoint.
    Option("rerank.surface", _boolean, ("rerank", "surface"), trusted=True),
    Option("rerank.tidy", _boolean, ("rerank", "tidy"), trusted=True),
    Option("alert_failed_runs", _positive_count, ("alert", "failed_runs"), trusted=True),
    Option("alert_max_age_hours", positive_number, ("alert", "max_age_hours"), trusted=True),
    Option("session.command", _string, ("session", "command"), trusted=True),
    Option("session.args", _string_list, ("session", "args"), trusted=True),
    Option("session.env", _string_table, ("session", "env"), trusted=True),
    Option("session.cwd", _string, ("session", "cwd"), trusted=True),
)  # fmt: skip
BY_TARGET = {o.target: o for o in OPTIONS}
FLAG_OPTIONS = tuple(o for o in OPTIONS if o.flag)

FILE_KEYS: dict[tuple[str, str], tuple[str, Validator]] = {
    o.key: (o.target, o.check) for o in OPTIONS if o.key
}
TRUSTED_KEYS = frozenset(o.dotted for o in OPTIONS if o.trusted and o.key)
DOTTED = {o.target: o.dotted for o in OPTIONS if o.key}


def as_number(text: str) -> float | int:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise TypeError("a number") from None
