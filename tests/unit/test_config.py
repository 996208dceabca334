from __future__ import annotations

import os
from pathlib import Path

import pytest

from memfuse.config import load_settings, secrets_in
from memfuse.errors import ConfigError, ExitCode
from memfuse.settings import RerankSettings, mask_secret


def test_defaults_point_at_the_openclaw_workspace(isolated_env: Path) -> None:
    settings = load_settings({}, {"HOME": str(isolated_env)})
    assert settings.workspace == isolated_env / ".openclaw" / "workspace"
    assert settings.server == "agent-memory"
    assert settings.transport == "auto"
    assert settings.surface.emotion_cap == 8


def _user_file(home: Path, text: str) -> Path:
    path = home / ".config" / "memfuse" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _workspace_file(ws: Path, text: str) -> Path:
    (ws / ".memfuse").mkdir(parents=True, exist_ok=True)
    path = ws / ".memfuse" / "config.toml"
    path.write_text(text)
    return path


def test_flag_beats_env_beats_workspace_file_beats_user_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    user = _user_file(
        tmp_path, 'server = "from-user"\ntimeout = 4\njobs = 1\n[surface]\ntop_n = 9\n'
    )
    local = _workspace_file(ws, "timeout = 3\njobs = 1\n")  # limits: lowered only
    env = {"HOME": str(tmp_path), "MEMFUSE_TIMEOUT": "9"}
    settings = load_settings({"workspace": str(ws), "jobs": 3}, env)
    assert settings.server == "from-user"
    assert settings.surface.top_n == 9  # the user file's tunables stay under the workspace's
    assert settings.timeout == 9
    assert settings.jobs == 3
    assert settings.config_files == (user, local)
    assert settings.config_notices == ()


def test_user_config_file_is_used_when_the_workspace_has_none(tmp_path: Path) -> None:
    _user_file(
        tmp_path, f'workspace = "{tmp_path / "elsewhere"}"\n[classify]\nknowledge = ["decided"]\n'
    )
    settings = load_settings({}, {"HOME": str(tmp_path)})
    assert settings.workspace == tmp_path / "elsewhere"
    assert settings.knowledge_keywords == ("decided",)


@pytest.mark.parametrize(
    "text",
    [
        'mcporter = "/ws/memory/x.sh"',
        'mcporter_config = "/ws/evil.json"',
        'server = "evil"',
        'transport = "session"',
        '[session]\ncommand = "/bin/sh"\nargs = ["-c", "id"]',
        '[session]\nenv = { LD_PRELOAD = "/ws/x.so" }',
        '[rerank]\nbase_url = "https://attacker.example/v1"',
        '[rerank]\nprovider = "jina"',
    ],
)
def test_a_trusted_key_in_the_workspace_file_is_not_applied(tmp_path: Path, text: str) -> None:
    ws = tmp_path / "ws"
    path = _workspace_file(ws, text + "\n[classify]\nknowledge = ['decided']\n")
    settings = load_settings({"workspace": str(ws)}, {"HOME": str(tmp_path)})
    assert settings.mcporter == "mcporter"
    assert settings.mcporter_config is None
    assert settings.server == "agent-memory"
    assert settings.transport == "auto"
    assert settings.session_server is None
    assert settings.rerank.base_url == RerankSettings().base_url
    assert settings.rerank.provider == "none"
    assert settings.knowledge_keywords == ("decided",)  # the tunable beside it still applies
    (notice,) = settings.config_notices
    key = text.split("=", maxsplit=1)[0].rsplit("\n", maxsplit=1)[-1].strip()
    assert str(path) in notice and key in notice and "not applied" in notice
    assert settings.config_refused


def test_trusted_keys_from_the_user_file_flags_and_env_apply(tmp_path: Path) -> None:
    _user_file(tmp_path, '[session]\ncommand = "node"\n[rerank]\nbase_url = "http://local:8080"\n')
    env = {"HOME": str(tmp_path), "MEMFUSE_MCPORTER": "/opt/mcporter"}
    settings = load_settings({"server": "mine"}, env)
    assert settings.session_server is not None and settings.session_server.command == "node"
    assert settings.rerank.base_url == "http://local:8080"
    assert (settings.mcporter, settings.server) == ("/opt/mcporter", "mine")


CASES = [
    ("timeout = 'soon'", "key 'timeout' must be a number"),
    ("[surface]\nemotion_cap = -1", "key 'surface.emotion_cap' must be a whole number"),
    ("[surface]\nbogus = 1", "unknown key 'surface.bogus'"),
    ("transport = 'carrier-pigeon'", "key 'transport'"),
    ("server = [", "is not valid TOML"),
    ("max_file_mib = 100000", "key 'max_file_mib' must be a whole number of MiB"),
]


@pytest.mark.parametrize(("text", "fragment"), CASES)
def test_a_bad_user_config_file_is_a_usage_error_naming_the_file_and_the_key(
    tmp_path: Path, text: str, fragment: str
) -> None:
    path = _user_file(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings({}, {"HOME": str(tmp_path)})
    assert fragment in str(caught.value)
    assert str(path) in str(caught.value)
    assert caught.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize(("text", "fragment"), CASES[:3] + CASES[4:])
def test_a_bad_workspace_config_file_is_a_warning_and_is_skipped(
    tmp_path: Path, text: str, fragment: str
) -> None:
    ws = tmp_path / "ws"
    path = _workspace_file(ws, text + "\njobs = 2" if "[" not in text else text)
    settings = load_settings({"workspace": str(ws)}, {"HOME": str(tmp_path)})
    (notice,) = settings.config_notices
    assert fragment in notice and str(path) in notice
    assert settings.timeout == 30.0 and settings.surface.emotion_cap == 8


def test_a_workspace_config_that_is_a_fifo_or_a_link_out_is_skipped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".memfuse").mkdir(parents=True)
    os.mkfifo(ws / ".memfuse" / "config.toml")
    settings = load_settings({"workspace": str(ws)}, {"HOME": str(tmp_path)})
    assert "FIFO" in settings.config_notices[0]
    (ws / ".memfuse" / "config.toml").unlink()
    outside = tmp_path / "planted.toml"
    outside.write_text("jobs = 1\n")
    (ws / ".memfuse" / "config.toml").symlink_to(outside)
    settings = load_settings({"workspace": str(ws)}, {"HOME": str(tmp_path)})
    assert "outside the workspace" in settings.config_notices[0]
    assert settings.jobs == 4


def test_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="MEMFUSE_JOBS"):
        load_settings({}, {"HOME": str(tmp_path), "MEMFUSE_JOBS": "many"})


def test_rerank_key_falls_back_to_openai_and_is_collected_as_a_secret(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "AGENT_MEMORY_RERANK_PROVIDER": "jina",
        "OPENAI_API_KEY": "sk-abcdef123456",
    }
    settings = load_settings({}, env)
    assert settings.rerank.enabled
    assert settings.rerank.api_key == "sk-abcdef123456"
    assert "sk-abcdef123456" in secrets_in(settings, env)
    assert "sk-abcdef123456" not in str(settings.describe())


def test_mask_secret_never_shows_short_secrets() -> None:
    assert mask_secret("abc123") == "****"
    assert mask_secret(None) == "(not set)"
    assert "sk-live" not in mask_secret("sk-live-0123456789abcdef")


def test_now_accepts_iso_and_rejects_nonsense(tmp_path: Path) -> None:
    settings = load_settings({"now": "2026-02-21T22:05"}, {"HOME": str(tmp_path)})
    assert (settings.now.year, settings.now.hour, settings.now.minute) == (2026, 22, 5)
    with pytest.raises(ConfigError, match="--now"):
        load_settings({"now": "yesterday"}, {"HOME": str(tmp_path)})


def test_the_settings_dump_masks_a_servers_env_and_a_urls_password(tmp_path: Path) -> None:
    """`doctor --json` always carries the settings: a token there would reach any log."""
    _user_file(
        tmp_path,
        '[session]\ncommand = "node"\nenv = { AGENT_MEMORY_TOKEN = "tok_SUPERSECRET_123456" }\n'
        '[rerank]\nbase_url = "https://user:hunter2pass@rerank.example.invalid/v1?key=abc123"\n',
    )
    rows = dict(load_settings({}, {"HOME": str(tmp_path)}).describe())
    dump = " ".join(rows.values())
    for secret in ("SUPERSECRET", "hunter2pass", "abc123"):
        assert secret not in dump
    assert "AGENT_MEMORY_TOKEN" in rows["session_server"]
    assert rows["rerank.base_url"] == "https://****@rerank.example.invalid/v1?key=****"


def test_a_session_token_and_a_url_password_are_masked_everywhere(tmp_path: Path) -> None:
    """Not only in the settings dump: the masker of every message and log line knows them."""
    _user_file(
        tmp_path,
        '[session]\ncommand = "node"\nenv = { AGENT_MEMORY_TOKEN = "tok_SUPERSECRET_123456",'
        ' AGENT_MEMORY_DB = "/home/me/memory.db" }\n'
        '[rerank]\nbase_url = "https://user:hunter2pass@rerank.example.invalid/v1?key=abc123"\n',
    )
    found = secrets_in(load_settings({}, {"HOME": str(tmp_path)}), {})
    assert {"tok_SUPERSECRET_123456", "hunter2pass", "abc123"} <= set(found)
    assert "/home/me/memory.db" not in found  # a path is not a secret, and stays readable
