"""openclaw.json's `$include` (issue 50): followed as OpenClaw 2026.9.6 follows it — relative
to the including file, one file replacing the object, a list merged in order, sibling keys
over it — within the configuration's folder (or OPENCLAW_INCLUDE_ROOTS), bounded in depth,
files and bytes; an include memfuse does not follow is the configuration's problem, said."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from memfuse.schedule.openclaw import config, host


def env_for(folder: Path, **more: str) -> dict[str, str]:
    return {"HOME": str(folder), "OPENCLAW_CONFIG_PATH": str(folder / "openclaw.json"), **more}


def files(folder: Path, **texts: str) -> None:
    for name, text in texts.items():
        path = folder / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_roster_and_the_alert_route_in_included_files_are_read(tmp_path: Path) -> None:
    files(
        tmp_path,
        **{"openclaw.json": "{ agents: { $include: './parts/agents.json5' },"
                            " cron: { $include: 'parts/cron.json5' } }",
           "parts__agents.json5": "{ entries: { home: { workspace: '~/h', },"
                                  " work: { $include: './work.json5' } } }",
           "parts__work.json5": "{ workspace: '~/w' }",  # relative to the file including it
           "parts__cron.json5": "{ failureAlert: { mode: 'webhook', to: 'https://hook' } }"},
    )  # fmt: skip
    env = env_for(tmp_path)
    assert host.config_problem(env) is None
    assert host.agents(env) == [("home", f"{tmp_path}/h"), ("work", f"{tmp_path}/w")]
    assert host.alert_route(env) == "OpenClaw posts them to the webhook of its cron.failureAlert"


def test_a_list_merges_in_order_and_sibling_keys_win(tmp_path: Path) -> None:
    files(
        tmp_path,
        **{"openclaw.json": "{ agents: { $include: ['a.json5', 'b.json5'],"
                            " defaults: { workspace: '/d' }, entries: { home: { x: 1 } } } }",
           "a.json5": "{ entries: { home: { workspace: '/a', x: 0 } }, list: [{ id: 'x' }] }",
           "b.json5": "{ entries: { home: { workspace: '/b' }, work: {} }, list: [{ id: 'y' }] }"},
    )  # fmt: skip
    agents = host.dig(host.read_config(env_for(tmp_path)), "agents")
    assert agents == {
        "entries": {"home": {"workspace": "/b", "x": 1}, "work": {}},
        "list": [{"id": "x"}, {"id": "y"}],
        "defaults": {"workspace": "/d"},
    }


def test_a_folder_openclaw_include_roots_names_may_hold_an_include(tmp_path: Path) -> None:
    outside = tmp_path / "shared"
    files(outside, **{"agents.json5": "{ entries: { home: { workspace: '/h' } } }"})
    files(
        tmp_path / "oc",
        **{"openclaw.json": f'{{ agents: {{ $include: "{outside}/agents.json5" }} }}'},
    )
    env = env_for(tmp_path / "oc")
    assert host.agents(env) == [] and "lies outside" in str(host.config_problem(env))
    allowed = env_for(tmp_path / "oc", OPENCLAW_INCLUDE_ROOTS=f"/nonexistent:{outside}")
    assert host.agents(allowed) == [("home", "/h")] and host.config_problem(allowed) is None
    files(tmp_path / "oc", **{"openclaw.json": "{ agents: { $include: './linked.json5' } }"})
    (tmp_path / "oc" / "linked.json5").symlink_to(outside / "agents.json5")
    assert "a link out of" in str(host.config_problem(env))  # into a folder none allows
    assert host.agents(allowed) == [("home", "/h")]  # into one OPENCLAW_INCLUDE_ROOTS names


def test_a_changed_included_file_is_read_again(tmp_path: Path) -> None:
    files(tmp_path, **{"openclaw.json": "{ agents: { $include: './a.json5' } }",
                       "a.json5": "{ entries: { home: {workspace: '/h'} } }"})  # fmt: skip
    env = env_for(tmp_path)
    assert [a for a, _ in host.agents(env)] == ["home"]
    files(tmp_path, **{"a.json5": "{ entries: { home: {workspace: '/h'}, work: {} } }"})
    assert [a for a, _ in host.agents(env)] == ["home", "work"]


def test_ten_includes_deep_are_followed_and_eleven_are_not(tmp_path: Path) -> None:
    def chain(depth: int) -> None:
        texts = {"openclaw.json": "{ agents: { $include: 'i1.json5' } }"}
        for n in range(1, depth):
            texts[f"i{n}.json5"] = f"{{ $include: 'i{n + 1}.json5' }}"
        texts[f"i{depth}.json5"] = "{ entries: { deep: {} } }"
        files(tmp_path, **texts)

    chain(10)
    assert [a for a, _ in host.agents(env_for(tmp_path))] == ["deep"]
    chain(11)
    assert "more than 10 includes deep" in str(host.config_problem(env_for(tmp_path)))


@pytest.mark.parametrize(
    ("texts", "said"),
    [
        ({"openclaw.json": "{ agents: { $include: '../outside.json5' } }"}, "lies outside"),
        ({"openclaw.json": "{ agents: { $include: 'gone.json5' } }"}, "there is no"),
        ({"openclaw.json": "{ agents: { $include: 3 } }"}, "not a path or a list of paths"),
        ({"openclaw.json": "{ agents: { $include: 'a.json5' } }", "a.json5": "{ $include: 'b.json5' }",
          "b.json5": "{ x: { $include: './a.json5' } }"}, "which includes itself"),
        ({"openclaw.json": "{ agents: { $include: 'a.json5', x: 1 } }", "a.json5": "[1]"},
         "beside other keys is not an object"),
        ({"openclaw.json": "{ agents: { $include: 'a.json5' } }", "a.json5": "{ x: "},
         "a.json5 is not JSON5"),
        ({"openclaw.json": "{ a: { $include: ['x.json5', 'x.json5', 'x.json5', 'x.json5'] } }",
          "x.json5": "{ }"}, "more than 3 included files in all"),
    ],
)  # fmt: skip
def test_an_include_not_followed_is_the_configurations_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, texts: dict[str, str], said: str
) -> None:
    monkeypatch.setattr(config, "INCLUDE_FILES", 3)
    (tmp_path / "oc").mkdir()
    files(tmp_path / "oc", **texts)
    (tmp_path / "outside.json5").write_text("{ entries: { home: {} } }")
    env = env_for(tmp_path / "oc")
    assert host.read_config(env) == {} and host.agents(env) == []
    problem = host.config_problem(env)
    assert problem is not None and said in problem, problem
    assert "memfuse read none of its settings there" in problem
    assert host.alert_route(env) == (
        f"where OpenClaw announces them is unknown: its configuration {config.reading(env).problem}"
    )


def test_a_link_out_a_hard_link_or_another_users_file_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "oc"
    files(folder, **{"openclaw.json": "{ agents: { $include: './a.json5' } }"})
    secret = tmp_path / "secret.json5"
    secret.write_text("{ entries: { home: {} } }")
    (folder / "a.json5").symlink_to(secret)
    assert "a link out of" in str(host.config_problem(env_for(folder)))
    (folder / "a.json5").unlink()
    os.link(secret, folder / "a.json5")
    assert "hard links" in str(host.config_problem(env_for(folder)))
    (folder / "a.json5").unlink()
    files(folder, **{"a.json5": "{ entries: { home: {} } }"})
    assert host.agents(env_for(folder))
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    config._KEPT.clear()
    assert "belongs to another user" in str(host.config_problem(env_for(folder)))


def test_json5_files_and_their_includes_are_read_whole_at_any_size(tmp_path: Path) -> None:
    """Issue 55: the pure Python reader took 13.7 CPU-s for 250 KiB of JSON5, so a budget cut
    what it read; pyjson5 reads the 1 MiB a file may have in milliseconds."""
    part = "{ x: '" + "y" * (600 << 10) + "', }"
    files(tmp_path, **{"openclaw.json": "{ a: { $include: ['p.json5', 'q.json5'] } }",
                       "p.json5": part, "q.json5": part})  # fmt: skip
    assert host.config_problem(env_for(tmp_path)) is None


@pytest.mark.parametrize("named", ["\\ud800", "parts/\\udfff.json5"])
def test_an_include_no_file_system_can_name_is_said_not_raised(tmp_path: Path, named: str) -> None:
    # a lone surrogate is valid JSON5 text but no path: os.stat raised UnicodeEncodeError
    files(tmp_path, **{"openclaw.json": f'{{ "agents": {{ "$include": ["{named}"] }} }}'})
    problem = host.config_problem(env_for(tmp_path))
    assert problem is not None and "not a path OpenClaw takes" in problem


def test_an_includes_path_cannot_print_a_line_of_its_own(tmp_path: Path) -> None:
    files(tmp_path, **{"openclaw.json": '{ "$include": "x\\nwarning: all is well" }'})
    problem = host.config_problem(env_for(tmp_path))
    assert problem is not None and "\n" not in problem and "x\\nwarning" in problem


def test_an_include_swapped_for_another_users_file_after_its_check_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The owner was checked on the path before the open: a file swapped in between (here:
    the check shown this user's file, the open finding another's) was read. It is checked on
    the open descriptor too."""
    files(tmp_path, **{"openclaw.json": "{ agents: { $include: './a.json5' } }",
                       "a.json5": "{ entries: { home: {} } }"})  # fmt: skip
    target, real_stat, me = str(tmp_path / "a.json5"), os.stat, os.getuid() + 1

    def as_checked(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        found = real_stat(path, *args, **kwargs)
        if str(path) != target:
            return found
        fields = list(found)
        fields[4] = me  # st_uid, as the check saw it
        return os.stat_result(fields)

    monkeypatch.setattr(os, "geteuid", lambda: me)
    monkeypatch.setattr(os, "stat", as_checked)
    config._KEPT.clear()
    env = env_for(tmp_path)
    assert host.agents(env) == []
    assert "belongs to another user" in str(host.config_problem(env))
