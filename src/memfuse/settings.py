"""What a memfuse run is configured by: frozen settings, resolved once by memfuse.config (pure
data: nothing here reads the environment or a file)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from memfuse.report import mask_args
from memfuse.text.classify import LEXICON

Transport = Literal["auto", "mcporter", "session"]

# The classifier's keyword table: the lexicon shipped with memfuse.text.classify (lexicon.txt).
DEFAULT_KNOWLEDGE = LEXICON["knowledge"]
DEFAULT_EMOTION = LEXICON["emotion"]


@dataclass(frozen=True)
class Budget:
    """What RECENT.md may hold: the `[surface]` settings (defaults here, nowhere else)."""

    window_days: int = 7
    fallback_days: int = 3  # journals read when the store is down
    top_n: int = 40
    emotion_cap: int = 8
    knowledge_cap: int = 15
    event_cap: int = 15
    max_lines: int = 80
    entry_chars: int = 200
    dedup_similarity: float = 0.9
    # what surface asks the store: one recall, and the newest memories listed by type
    query: str = "最近重要的事 情感 决策"
    recall_limit: int = 30
    knowledge_listed: int = 20
    emotion_listed: int = 10

    def cap(self, section: str) -> int:
        return {"emotion": self.emotion_cap, "knowledge": self.knowledge_cap}.get(
            section, self.event_cap
        )


@dataclass(frozen=True)
class Policy:
    """When a run stops being best-effort and needs a person."""

    failed_runs: int
    max_age: timedelta


@dataclass(frozen=True)
class RerankSettings:
    """The external reranker; disabled unless a provider and a key are both set."""

    provider: str = "none"
    model: str = "Qwen/Qwen3-Reranker-8B"
    api_key: str | None = None
    base_url: str = "https://api.openai.com/v1"
    timeout: float = 10.0
    surface: bool = True  # surface's recall goes through the reranker when it is enabled
    tidy: bool = True  # and so does tidy's consistency recall

    @property
    def enabled(self) -> bool:
        return self.provider in {"openai", "jina", "cohere", "tei"} and bool(self.api_key)


@dataclass(frozen=True)
class SessionServer:
    """How to start the MCP server for the session transport, when given in memfuse's config."""

    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None


@dataclass(frozen=True)
class Settings:
    """Everything a memfuse run is configured by. Frozen: resolve once, pass around."""

    workspace: Path
    now: datetime
    state_dir: Path | None = None  # memfuse.config resolves it; None: the default for the workspace
    mcporter: str = "mcporter"
    mcporter_config: Path | None = None
    server: str = "agent-memory"
    transport: Transport = "auto"
    semantic: Literal["auto", "off"] = "auto"  # off: recall by words, the model never loaded
    timeout: float = 30.0
    jobs: int = 4
    knowledge_keywords: tuple[str, ...] = DEFAULT_KNOWLEDGE
    emotion_keywords: tuple[str, ...] = DEFAULT_EMOTION
    surface: Budget = field(default_factory=Budget)
    # tidy
    memory_md_max_lines: int = 200
    consistent_similarity: float = 0.85
    related_similarity: float = 0.3
    archive_after_days: int = 7
    rerank: RerankSettings = field(default_factory=RerankSettings)
    session_server: SessionServer | None = None
    max_file_mib: int = 16
    # when a failing run stops being a warning and exits ESCALATED (see memfuse.run.history)
    alert_failed_runs: int = 3
    alert_max_age_hours: float = 24.0
    config_files: tuple[Path, ...] = ()  # user file, then the workspace's: later wins
    config_notices: tuple[str, ...] = ()  # warnings about the workspace's config file
    config_refused: tuple[str, ...] = ()  # what of it was not applied (--strict: exit 3)

    @property
    def alert_policy(self) -> Policy:
        return Policy(self.alert_failed_runs, timedelta(hours=self.alert_max_age_hours))

    @property
    def store_setup(self) -> str:
        """What reaches the store, as a digest: a run's and the installed schedule's tell a run
        by hand with other settings from the schedule's (memfuse.run.history.by_schedule)."""
        given = (self.mcporter, self.mcporter_config, self.server, self.transport)
        return hashlib.sha256(repr((*given, self.session_server)).encode()).hexdigest()[:12]

    @property
    def read_cap(self) -> int:
        return self.max_file_mib * 1024 * 1024

    def describe(self) -> list[tuple[str, str]]:
        """The effective configuration as (name, value) rows, secrets masked."""
        rows: list[tuple[str, str]] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("rerank", "surface"):
                for sub in fields(value):
                    shown = getattr(value, sub.name)
                    if sub.name == "api_key":
                        shown = mask_secret(shown)
                    elif sub.name == "base_url":
                        shown = mask_url(str(shown))
                    rows.append((f"{f.name}.{sub.name}", str(shown)))
                continue
            if isinstance(value, SessionServer):  # its env is where a server's token lives
                env = {name: mask_secret(v) for name, v in value.env}
                args = " ".join(mask_args(value.args))  # a key or a URL password, too
                value = f"{value.command} {args} env={env} cwd={value.cwd}"
            if isinstance(value, tuple) and value and isinstance(value[0], str | Path):
                value = ", ".join(str(v) for v in value)
            rows.append((f.name, str(value)))
        return rows


def mask_url(url: str) -> str:
    """A URL with any password in it and its query's values masked (`user:pw@`, `?key=…`)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "****@" + netloc.rsplit("@", 1)[1]
    query = "&".join(f"{k}=****" for k, _v in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def mask_secret(secret: str | None) -> str:
    """Show that a secret is set without revealing it."""
    if not secret:
        return "(not set)"
    return f"****{secret[-2:]}" if len(secret) >= 16 else "****"
