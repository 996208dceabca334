from __future__ import annotations

from pathlib import Path

import pytest

from memfuse.config import load_settings, mask_secret, secrets_in
from memfuse.errors import ConfigError, ExitCode


def test_defaults_point_at_the_openclaw_workspace(isolated_env: Path) -> None:
    settings = load_settings({}, {"HOME": str(isolated_env)})
    assert settings.workspace == isolated_env / ".openclaw" / "workspace"
    assert settings.server == "agent-memory"
    assert settings.transport == "mcporter"
    assert settings.surface.emotion_cap == 8


def test_flag_beats_env_beats_file_beats_default(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".memfuse").mkdir(parents=True)
    (ws / ".memfuse" / "config.toml").write_text('server = "from-file"\ntimeout = 5\njobs = 2\n')
    env = {"HOME": str(tmp_path), "MEMFUSE_TIMEOUT": "9"}
    settings = load_settings({"workspace": str(ws), "jobs": 3}, env)
    assert settings.server == "from-file"
    assert settings.timeout == 9
    assert settings.jobs == 3
    assert settings.config_file == ws / ".memfuse" / "config.toml"


def test_user_config_file_is_used_when_the_workspace_has_none(tmp_path: Path) -> None:
    user = tmp_path / ".config" / "memfuse"
    user.mkdir(parents=True)
    (user / "config.toml").write_text(
        f'workspace = "{tmp_path / "elsewhere"}"\n[classify]\nknowledge = ["decided"]\n'
    )
    settings = load_settings({}, {"HOME": str(tmp_path)})
    assert settings.workspace == tmp_path / "elsewhere"
    assert settings.knowledge_keywords == ("decided",)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("timeout = 'soon'", "key 'timeout' must be a number"),
        ("[surface]\nemotion_cap = -1", "key 'surface.emotion_cap' must be a whole number"),
        ("[surface]\nbogus = 1", "unknown key 'surface.bogus'"),
        ("transport = 'carrier-pigeon'", "key 'transport'"),
        ("server = [", "is not valid TOML"),
    ],
)
def test_a_bad_config_file_names_the_file_and_the_key(
    tmp_path: Path, text: str, fragment: str
) -> None:
    ws = tmp_path / "ws"
    (ws / ".memfuse").mkdir(parents=True)
    path = ws / ".memfuse" / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_settings({"workspace": str(ws)}, {"HOME": str(tmp_path)})
    assert fragment in str(caught.value)
    assert str(path) in str(caught.value)
    assert caught.value.exit_code == ExitCode.USAGE


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
