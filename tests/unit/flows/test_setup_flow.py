"""Setting up never overwrites a file the user owns: the server's mcporter entry is merged into
an existing config (a copy kept, the change shown), and a config that cannot serve is a FAIL
with the fix, not an `ok` line that hides an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes import World

OTHER = {"mcpServers": {"github": {"command": "gh-mcp", "args": ["--stdio"]}},
         "imports": ["cursor", "claude-code"]}  # fmt: skip


@pytest.fixture
def server_js(tmp_path: Path) -> Path:
    """agent-memory as npm installs it: dist/mcp/server.js beside its package.json."""
    package = tmp_path / "node_modules" / "@smyslenny" / "agent-memory"
    (package / "dist" / "mcp").mkdir(parents=True)
    (package / "package.json").write_text('{"name": "@smyslenny/agent-memory", "version": "5.1.0"}')
    js = package / "dist" / "mcp" / "server.js"
    js.write_text("// the server\n")
    return js


def test_the_entry_is_merged_beside_the_users_servers_with_a_copy_and_a_diff(
    world: World, tmp_path: Path, server_js: Path
) -> None:
    config = tmp_path / "mcporter.json"
    config.write_text(json.dumps(OTHER, indent=2))
    out = world.json("doctor", "--install-config", str(config), "--server-js", str(server_js))
    assert out.code == 0, out.stdout
    merged = json.loads(config.read_text())
    assert merged["mcpServers"]["github"] == OTHER["mcpServers"]["github"]
    assert merged["imports"] == ["cursor", "claude-code"]  # editor imports stay on
    entry = merged["mcpServers"]["agent-memory"]
    assert entry["args"] == [str(server_js)]
    assert entry["env"]["AGENT_MEMORY_AUTO_INGEST"] == "0"
    assert int(entry["env"]["AGENT_MEMORY_MAX_EVENT"]) >= 15 * 7  # 5.x keeps 50 by default
    assert json.loads(Path(out.data["backup"]).read_text()) == OTHER
    assert any(c.startswith('+    "agent-memory"') for c in out.data["changes"])
    assert any("agent-memory 5.1.0" in c for c in out.data["changes"])
    again = world.json("doctor", "--install-config", str(config), "--server-js", str(server_js))
    assert again.data["backup"] is None and "nothing changed" in again.data["changes"][-1]


def test_a_new_config_file_is_created_with_the_entry_alone(
    world: World, tmp_path: Path, server_js: Path
) -> None:
    config = tmp_path / "new" / "mcporter.json"
    out = world.json("doctor", "--install-config", str(config), "--server-js", str(server_js),
                     "--server-version", "2.2.0")  # fmt: skip
    assert out.code == 0
    written = json.loads(config.read_text())
    assert list(written["mcpServers"]) == ["agent-memory"] and "imports" not in written
    assert "AGENT_MEMORY_MAX_EVENT" not in written["mcpServers"]["agent-memory"]["env"]  # 2.x
    assert config.stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"mcpServers": {"github": ', "is not JSON"),
        # Python's parser takes NaN; Node's refuses the whole file (issue 33)
        ('{"mcpServers": {"x": {"command": "x", "timeout": NaN}}}', "holds NaN, which is not JSON"),
    ],
)
def test_a_config_that_is_not_json_is_left_alone(
    world: World, tmp_path: Path, server_js: Path, text: str, said: str
) -> None:
    config = tmp_path / "mcporter.json"
    config.write_text(text)
    out = world.json("doctor", "--install-config", str(config), "--server-js", str(server_js))
    assert out.code == 2 and said in out.data["error"]
    assert config.read_text() == text
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("mcporter")] == [config.name]


def test_print_config_refuses_to_guess_a_server_it_cannot_find(world: World) -> None:
    out = world.run("doctor", "--print-config")
    assert out.code == 2 and out.stdout == ""  # `> file` leaves nothing half-made to read
    assert "--server-js" in out.stderr


@pytest.mark.parametrize(
    ("text", "said"),
    [("", "is empty"), ("{not json", "is not JSON"), ('{"mcpServers": {}}', "has no server")],
)
def test_an_empty_or_broken_mcporter_config_is_a_fail_with_the_fix(
    world: World, tmp_path: Path, text: str, said: str
) -> None:
    config = tmp_path / "mcporter.json"
    config.write_text(text)
    out = world.json("doctor", "--mcporter-config", str(config))
    assert out.code == 1
    check = next(c for c in out.data["checks"] if c["name"] == "mcporter-config")
    assert not check["ok"] and check["critical"] and said in check["detail"]
    assert f"memfuse doctor --install-config {config}" in check["detail"]
    assert not [c for c in out.data["checks"] if c["name"] == "transport"]  # stopped there


def test_the_settings_dump_is_behind_a_flag(world: World) -> None:
    plain = world.run("doctor").stdout
    assert "  timeout = " not in plain
    shown = world.run("doctor", "--show-config").stdout
    assert "  timeout = " in shown
    assert world.json("doctor").data["config"]["timeout"]  # JSON always carries it


def test_a_fifo_in_place_of_the_config_is_refused_without_hanging(
    world: World, tmp_path: Path
) -> None:
    import os

    config = tmp_path / "mcporter.json"
    os.mkfifo(config)  # a read of it would wait forever for a writer
    out = world.json("doctor", "--mcporter-config", str(config))
    assert out.code == 1
    check = next(c for c in out.data["checks"] if c["name"] == "mcporter-config")
    assert "FIFO" in check["detail"]


def test_a_config_nested_past_any_sense_is_a_fail_not_a_crash(world: World, tmp_path: Path) -> None:
    config = tmp_path / "mcporter.json"
    config.write_text("[" * 100_000 + "]" * 100_000)
    out = world.json("doctor", "--mcporter-config", str(config))
    assert out.code == 1 and "Traceback" not in out.stderr
    check = next(c for c in out.data["checks"] if c["name"] == "mcporter-config")
    assert "is not JSON" in check["detail"]


def test_install_config_keeps_other_servers_values_byte_for_byte() -> None:
    """Before: the trailing-comma rule ran inside strings, and `pa,}ss` was written back as
    `pa}ss` in another server's entry."""
    import json

    from memfuse.store.server_entry import strip_jsonc

    text = (
        '{ "mcpServers": { "gh": { "command": "gh-mcp", "args": ["--scopes=repo, ]",],'
        ' // a comment, ]\n "env": { "DB_PASSWORD": "pa,}ss" /* x */, }, }, }, }'
    )
    parsed = json.loads(strip_jsonc(text))
    assert parsed["mcpServers"]["gh"]["args"] == ["--scopes=repo, ]"]
    assert parsed["mcpServers"]["gh"]["env"] == {"DB_PASSWORD": "pa,}ss"}


TOKENS = ("ghp_abcdef123456", "bearer-xyz-98765", "pw-4242-secret", "tok_querystring")


def hostile_config() -> str:
    """Another server's secrets in every shape, a number no double holds, one line."""
    other = {
        "github": {"command": "gh-mcp", "args": ["--token", TOKENS[0]],
                   "env": {"GITHUB_TOKEN": TOKENS[0], "LIMIT": 1e400}},
        "remote": {"url": f"https://me:{TOKENS[2]}@mcp.example.invalid/x?api_key={TOKENS[3]}",
                   "headers": {"Authorization": f"Bearer {TOKENS[1]}"}},
    }  # fmt: skip
    return json.dumps({"mcpServers": other}).replace("Infinity", "1e400")


def test_install_config_prints_no_secret_keeps_numbers_mode_line_and_link(
    world: World, tmp_path: Path, server_js: Path
) -> None:
    """Issue 33: another server's token showed in the diff and twice in --json; 1e400 was
    written back as Infinity (which Node refuses for the whole file); a one-line 0644 file came
    back indented and 0600; and a linked config failed after leaving its backup behind."""
    real = tmp_path / "dotfiles" / "mcporter.json"
    real.parent.mkdir()
    real.write_text(hostile_config())
    real.chmod(0o644)
    link = tmp_path / "mcporter.json"
    link.symlink_to(real)
    out = world.json("doctor", "--install-config", str(link), "--server-js", str(server_js))
    assert out.code == 0, out.stdout
    for token in TOKENS:
        assert token not in out.stdout and token not in out.stderr
    assert any("****" in c for c in out.data["changes"])
    written = real.read_text()
    assert "1e400" in written and "Infinity" not in written
    assert written.count("\n") == 0  # one line, as it was
    assert oct(real.stat().st_mode & 0o777) == "0o644"
    assert link.is_symlink() and json.loads(written)["mcpServers"]["agent-memory"]
    backup = Path(out.data["backup"])
    tabs = tmp_path / "tabs.json"
    tabs.write_text(json.dumps(OTHER, indent="\t"))  # an indent of its own stays
    assert (
        world.json("doctor", "--install-config", str(tabs), "--server-js", str(server_js)).code == 0
    )
    assert tabs.read_text().startswith('{\n\t"mcpServers": {\n\t\t"github"')
    assert backup.parent == real.parent and backup.read_text() == hostile_config()
    assert not any("comments" in c for c in out.data["changes"])  # `https://` is no comment
    real.write_text(hostile_config())  # the human text says nothing secret either
    again = world.run("doctor", "--install-config", str(link), "--server-js", str(server_js))
    assert again.code == 0 and "-{" in again.stdout and "+{" in again.stdout
    assert not any(token in again.stdout + again.stderr for token in TOKENS)


def test_two_changes_in_one_second_each_keep_their_copy_and_the_first_is_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newcomer's run of `cron --install --all-agents`: an entry per agent in one second, and
    the second copy was written over the first, so the file as the user had it was gone."""
    from datetime import datetime

    from memfuse.setup import merge as install_config

    class Frozen(datetime):
        @classmethod
        def now(cls, tz: object = None) -> Frozen:  # type: ignore[override]
            return cls(2026, 12, 7, 3, 13, 37)

    monkeypatch.setattr(install_config, "datetime", Frozen)
    target = tmp_path / "mcporter.json"
    users = '{"mcpServers": {"agent-memory": {"command": "node", "args": ["server.js"]}}}\n'
    target.write_text(users)
    entry = {"command": "node", "args": ["server.js"]}
    _, said_home = install_config.install(target, "agent-memory-home", {**entry, "env": {"A": "1"}})
    _, said_work = install_config.install(target, "agent-memory-work", {**entry, "env": {"A": "2"}})
    copies = sorted(tmp_path.glob("mcporter.json.before-memfuse-*"))
    assert [c.name for c in copies] == [
        "mcporter.json.before-memfuse-20261207T031337",
        "mcporter.json.before-memfuse-20261207T031337-2",
    ]
    assert copies[0].read_text() == users
    assert "agent-memory-home" in copies[1].read_text()
    assert f"as it was is kept in {copies[0]}" in "\n".join(said_home)
    assert f"as it was is kept in {copies[1]}" in "\n".join(said_work)
