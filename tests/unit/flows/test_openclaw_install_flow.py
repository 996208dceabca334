"""`memfuse cron --format openclaw --install/--remove` against a stand-in of the real CLI
(tests/fake_openclaw.py): declared by key, so a second install changes nothing; ids after `--`;
the list read past its first page; tidy clear of OpenClaw's dreaming sweep; failures named."""

from __future__ import annotations

import functools
import json
import os
import shutil
import stat
import subprocess
import sys
import traceback
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from memfuse.schedule import plan
from memfuse.schedule.base import run_tool
from memfuse.schedule.install import SCHEDULE_FILE
from memfuse.schedule.openclaw import jobs as openclaw
from memfuse.settings import Settings
from tests import fake_openclaw
from tests.conftest import ROOT
from tests.fakes import World

DREAMING = {
    "id": "4d9258fb-dream",
    "declarationKey": "memory-core:memory-dreaming-promotion",
    "name": "Memory Dreaming Promotion",
    "description": "[managed-by=memory-core.short-term-promotion] Promote weighted short-term"
    " recalls into MEMORY.md",
    "enabled": True,
    "schedule": {"kind": "cron", "expr": "0 3 * * *"},
    "payload": {
        "kind": "agentTurn",
        "message": "__openclaw_memory_core_short_term_promotion_dream__",
    },
}
USERS = {"id": "j-user", "name": "morning-brief", "enabled": True,
         "schedule": {"kind": "cron", "expr": "0 7 * * *"},
         "payload": {"kind": "agentTurn", "message": "Summarize overnight updates."}}  # fmt: skip


class Gateway:
    def __init__(self, folder: Path, script: Path) -> None:
        self.state = folder / "openclaw-state.json"
        self.calls_file = folder / "calls.jsonl"
        self.script = script

    def run(self, argv: list[str], **how: Any) -> subprocess.CompletedProcess[str]:
        """`subprocess.run`, but the stand-in answers in-process where `openclaw` is it."""
        if argv[0] != "openclaw" or shutil.which("openclaw") != str(self.script):
            return subprocess.run(argv, **how)  # noqa: PLW1510 - run_tool passes check
        try:
            code, out, err = fake_openclaw.respond(argv[1:])
        except Exception:  # a process of its own would exit 1 with the traceback
            code, out, err = 1, "", traceback.format_exc()
        return subprocess.CompletedProcess(argv, code, out, err)

    def put(self, *jobs: dict[str, object]) -> None:
        self.state.write_text(json.dumps({"jobs": list(jobs)}))

    @property
    def jobs(self) -> list[dict[str, object]]:
        return list(json.loads(self.state.read_text())["jobs"])

    def calls(self, *command: str) -> list[list[str]]:
        if not self.calls_file.exists():
            return []
        every = [json.loads(line) for line in self.calls_file.read_text().splitlines()]
        return [c for c in every if tuple(c[: len(command)]) == command]

    def patches(self) -> list[object]:
        """What each `config.patch` merged into openclaw.json, in turn."""
        sent = self.calls("gateway", "call", "config.patch")
        return [json.loads(json.loads(c[4].split("=", 1)[1])["raw"]) for c in sent]

    def forget_calls(self) -> None:
        self.calls_file.unlink(missing_ok=True)


@pytest.fixture
def gateway(world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Gateway:
    return stand_in(tmp_path, monkeypatch, world)


def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world: World) -> Gateway:
    """tests/fake_openclaw.py as `openclaw` on PATH, its state empty; `world`'s runs call it
    in-process while it is the `openclaw` on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "openclaw"
    script.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "tests" / "fake_openclaw.py"}" "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_OPENCLAW_STATE", str(tmp_path / "openclaw-state.json"))
    made = Gateway(tmp_path, script)
    made.put()
    world.tool = functools.partial(run_tool, run=made.run)
    return made


def ours(gateway: Gateway, world: World) -> list[dict[str, object]]:
    """This workspace's jobs, in the order of its runs (they are declared side by side)."""
    label = plan.label_for(world.workspace)
    runs = ("sync", "surface", "tidy")
    found = [j for j in gateway.jobs if key_of(j).startswith(label)]
    return sorted(found, key=lambda j: runs.index(key_of(j).split("-")[2]))


def key_of(job: dict[str, object]) -> str:
    """A job's hash label: its declaration key's, or (made by an older memfuse) its name."""
    key = str(job.get("declarationKey") or "")
    return key.removeprefix(openclaw.DECLARATION_PREFIX) if key else str(job.get("name", ""))


def test_a_second_install_changes_nothing_and_keeps_the_ids(world: World, gateway: Gateway) -> None:
    world.tool = run_tool  # the stand-in a process of its own each call, as OpenClaw's CLI is
    gateway.put(USERS)
    first = world.json("cron", "--format", "openclaw", "--install")
    assert first.code == 0, first.stdout
    installed = ours(gateway, world)
    assert sorted(j["declarationKey"] for j in installed) == sorted(
        openclaw.declaration_key(f"{plan.label_for(world.workspace)}-{run}")
        for run in ("sync", "surface", "tidy")
    )
    assert all(j["failureAlert"] == {"after": 1} for j in installed)  # exit 4 is said at once
    gateway.forget_calls()
    again = world.json("cron", "--format", "openclaw", "--install")
    assert again.code == 0, again.stdout
    assert ours(gateway, world) == installed  # the same ids, nothing re-made
    assert gateway.calls("cron", "rm") == [] and gateway.calls("cron", "edit") == []
    assert gateway.calls("gateway", "call", "cron.add") == []  # in place: no call at all
    jobs = [c for c in again.data["changes"] if "OpenClaw job" in c]
    assert len(jobs) == 3 and all("unchanged" in c for c in jobs)
    assert USERS in gateway.jobs


def test_ids_reach_openclaw_after_a_double_dash_and_a_job_without_one_is_left(
    world: World, gateway: Gateway
) -> None:
    """Issue 33: an id like `--all` was read by `openclaw cron rm` as its option."""
    label = plan.label_for(world.workspace)
    legacy = {"id": "--all", "name": f"{label}-sync", "enabled": True,
              "schedule": {"kind": "cron", "expr": "0 14,22 * * *"}, "payload": {}}  # fmt: skip
    no_id = {"name": f"{label}-surface", "enabled": True, "schedule": {}, "payload": {}}
    gateway.put(USERS, legacy, no_id)
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    assert gateway.calls("cron", "rm") == [["cron", "rm", "--json", "--", "--all"]]
    assert all(c[-2] == "--" for c in gateway.calls("cron", "edit"))
    assert not any("None" in c for call in gateway.calls() for c in call)
    assert any(f"left the OpenClaw job {label}-surface" in c for c in out.data["changes"])
    assert legacy not in gateway.jobs and USERS in gateway.jobs


def test_the_job_list_is_read_past_its_first_page(
    world: World, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    label = plan.label_for(world.workspace)
    others = [{**USERS, "id": f"j{i}", "name": f"other-{i}"} for i in range(5)]
    stale = {"id": "old-tidy", "name": f"{label}-tidy-2", "enabled": True,
             "declarationKey": openclaw.declaration_key(f"{label}-tidy-2"),
             "schedule": {"kind": "cron", "expr": "30 3 * * *"}, "payload": {}}  # fmt: skip
    gateway.put(*others, DREAMING, stale)
    monkeypatch.setenv("FAKE_OPENCLAW_PAGE", "2")  # a CLI that printed one page
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    assert len(gateway.calls("gateway", "call", "cron.list")) == 3
    assert gateway.calls("cron", "rm") == [["cron", "rm", "--json", "--", "old-tidy"]]
    assert "tidy moved from 03:00 to 03:30" in " ".join(out.data["notes"])  # page 4 dreams


def test_tidy_moves_out_of_the_dreaming_sweeps_minute_and_says_so(
    world: World, gateway: Gateway
) -> None:
    gateway.put(DREAMING)
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    tidy = next(j for j in ours(gateway, world) if key_of(j).endswith("-tidy"))
    assert tidy["schedule"]["expr"] == "30 3 * * *"
    said = [c for c in out.data["notes"] if "moved" in c]
    assert said == [
        "tidy moved from 03:00 to 03:30: 'Memory Dreaming Promotion' at 03:00 rewrites"
        " MEMORY.md in that minute"
    ]
    record = json.loads((world.state / SCHEDULE_FILE).read_text())
    assert record["runs"]["tidy"] == ["03:30"]  # what status checks runs against
    files = json.loads(next(iter(out.data["files"].values())))
    assert [j["schedule"]["expr"] for j in files][-1] == "30 3 * * *"


def test_remove_takes_out_this_schedules_jobs_only(world: World, gateway: Gateway) -> None:
    gateway.put(USERS, DREAMING)
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    out = world.json("cron", "--format", "openclaw", "--remove")
    assert out.code == 0, out.stdout
    assert gateway.jobs == [USERS, DREAMING]
    assert all(c[-2] == "--" for c in gateway.calls("cron", "rm"))


def test_a_failing_cli_is_reported_by_the_line_that_names_the_cause(
    world: World, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    said = (
        "Gateway not reachable at ws://u:hunter2@127.0.0.1:18789 (ECONNREFUSED).\n"
        "Start it with `openclaw gateway run` or check `openclaw gateway status`.\n"
        "Gateway target: ws://127.0.0.1:18789\nSource: local loopback\n"
        "Config: /home/u/.openclaw/openclaw.json\nBind: loopback"
    )
    monkeypatch.setenv("FAKE_OPENCLAW_FAIL", said)
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 1
    error = out.data["error"]
    assert "Gateway not reachable at" in error and "openclaw gateway run" in error
    assert "Bind: loopback" not in error and "hunter2" not in error
    assert "hunter2" not in out.stdout + out.stderr


# --- OpenClaw's dreaming beside the other schedulers, from its config alone ---------------


def tidy_line(text: str) -> str:
    return next(line for line in text.splitlines() if " tidy " in line and line[0].isdigit())


def test_with_openclaw_here_the_crontabs_tidy_leaves_the_dreaming_minute(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    assert tidy_line(world.json("cron").data["text"]).startswith("0 3 * * * ")  # no OpenClaw
    (home / ".openclaw").mkdir(parents=True)  # as `doctor --install-config` leaves it
    bare = world.json("cron")
    assert tidy_line(bare.data["text"]).startswith("0 3 * * * ")  # issue 40: not OpenClaw
    assert not [n for n in bare.data["notes"] if "moved" in n]
    config = home / ".openclaw" / "openclaw.json"
    config.write_text("{}")  # OpenClaw, its defaults: dreaming at 03:00
    out = world.json("cron")
    assert tidy_line(out.data["text"]).startswith("30 3 * * * ")
    assert any("tidy moved from 03:00 to 03:30" in n for n in out.data["notes"])
    config.write_text(
        '{ // JSONC as OpenClaw allows\n "plugins": {"entries": {"memory-core": {"config":'
        ' {"dreaming": {"frequency": "0 4 * * *"}}}}},\n}'
    )
    assert tidy_line(world.json("cron").data["text"]).startswith("0 3 * * * ")
    config.write_text('{"plugins": {"entries": {"memory-core": {"config": {"dreaming":'
                      ' {"enabled": false}}}}}}')  # fmt: skip
    assert tidy_line(world.json("cron").data["text"]).startswith("0 3 * * * ")


def test_check_finds_the_dreaming_job_and_a_tidy_in_its_minute(
    world: World, tmp_path: Path, dry_runs: list[list[str]]
) -> None:
    tidy = openclaw.jobs(
        plan.build(Settings(workspace=world.workspace, now=datetime.now().astimezone())),
    )[-1]
    assert tidy["name"].startswith("memfuse tidy ") and tidy["schedule"]["expr"] == "0 3 * * *"
    listed = tmp_path / "jobs.json"
    listed.write_text(json.dumps({"jobs": [DREAMING, tidy]}))
    out = world.json("cron", "--format", "openclaw", "--check", str(listed))
    assert out.code == 1
    by_job = {j["job"]: j for j in out.data["jobs"]}
    assert by_job["Memory Dreaming Promotion"]["when"] == "03:00"
    problems = by_job[tidy["name"]]["problems"]
    assert any("the minute 'Memory Dreaming Promotion' rewrites MEMORY.md" in p for p in problems)
    assert [argv[1] for argv in dry_runs] == ["tidy"]  # ours tried, the dreaming job not


# --- issue 40: zone, agent, names, the dreaming clash in instants, alerts, the hook ---------


def test_jobs_carry_the_shells_zone_a_readable_name_and_a_zoned_description(
    world: World, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40: with TZ=Asia/Shanghai the jobs had no --tz (the Gateway's zone ran them),
    schedule.json said Etc/UTC, and `cron list` showed cut hash labels."""
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    installed = ours(gateway, world)
    assert [j["schedule"].get("tz") for j in installed] == ["Asia/Shanghai"] * 3
    folder = world.workspace.name
    assert [j["displayName"] for j in installed] == [
        f"memfuse {run} ({folder})" for run in ("sync", "surface", "tidy")
    ]
    assert installed[0]["description"].startswith("14:00 and 22:00 Asia/Shanghai: ")
    assert all("--tz=Asia/Shanghai" in c for c in gateway.calls("cron", "add"))
    assert all(j.get("agentId") is None for j in installed)  # not a configured agent's
    record = json.loads((world.state / SCHEDULE_FILE).read_text())
    assert record["zone"] == "Asia/Shanghai" and record["format"] == "openclaw"


def test_a_configured_agents_workspace_gives_its_jobs_that_agent(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"agents": {"list": [
        {"id": "main"}, {"id": "coder", "workspace": str(world.workspace)},
    ]}}))  # fmt: skip
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    assert [j["agentId"] for j in ours(gateway, world)] == ["coder"] * 3
    declared = [json.loads(c[-1].split("=", 1)[1]) for c in gateway.calls("gateway", "call")
                if c[2] == "cron.add"]  # fmt: skip
    assert len(declared) == 3 and all(p["agentId"] == "coder" for p in declared)
    printed = json.loads(
        next(iter(world.json("cron", "--format", "openclaw").data["files"].values()))
    )
    assert {j["agentId"] for j in printed} == {"coder"}


NEW_YORK_DREAMING = {**DREAMING, "schedule": {"kind": "cron", "expr": "0 22 * * *",
                                               "tz": "America/New_York"}}  # fmt: skip


def test_dreaming_in_its_own_zone_is_compared_as_an_instant(
    world: World,
    gateway: Gateway,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    dry_runs: list[list[str]],
) -> None:
    """Issue 40: dreaming at 22:00 New York and tidy at 03:00 UTC run in the same minute
    (in winter); install said `unchanged` and --check said ok."""
    monkeypatch.setenv("TZ", "Etc/UTC")
    gateway.put(NEW_YORK_DREAMING)
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    tidy = next(j for j in ours(gateway, world) if key_of(j).endswith("-tidy"))
    assert tidy["schedule"]["expr"] == "30 3 * * *"  # 02:00 (summer) and 03:00 (winter) taken
    assert any(
        "tidy moved from 03:00 to 03:30: 'Memory Dreaming Promotion' at 22:00 America/New_York" in n
        for n in out.data["notes"]
    )
    at_three = openclaw.jobs(
        plan.build(Settings(workspace=world.workspace, now=datetime.now().astimezone())),
    )[-1]
    listed = tmp_path / "jobs.json"
    listed.write_text(json.dumps({"jobs": [NEW_YORK_DREAMING, at_three]}))
    checked = world.json("cron", "--format", "openclaw", "--check", str(listed))
    assert checked.code == 1
    problems = {j["job"]: j for j in checked.data["jobs"]}[at_three["name"]]["problems"]
    assert any("rewrites MEMORY.md (its 22:00 America/New_York)" in p for p in problems)
    assert [argv[1] for argv in dry_runs] == ["tidy"]


def test_install_says_failures_reach_nobody_without_a_channel_and_where_with_one(
    world: World, gateway: Gateway
) -> None:
    """Issue 40: with no channel, OpenClaw's failure alert fails ("Channel is required")."""
    out = world.json("cron", "--format", "openclaw", "--install")
    said = next(c for c in out.data["changes"] if c.startswith("failures: "))
    assert "NOT announced" in said and "Channel is required" in said
    record = json.loads((world.state / SCHEDULE_FILE).read_text())
    assert "NOT announced" in record["alerts"]
    config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    config.write_text(json.dumps({**json.loads(config.read_text()),
                                  "channels": {"telegram": {"botToken": "x"}}}))  # fmt: skip
    again = world.json("cron", "--format", "openclaw", "--install")
    said = next(c for c in again.data["changes"] if c.startswith("failures: "))
    assert "announces them on its channel (telegram)" in said and "NOT" not in said


def test_remove_says_what_it_leaves(world: World, gateway: Gateway) -> None:
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    out = world.json("cron", "--format", "openclaw", "--remove")
    left = [c for c in out.data["changes"] if c.startswith("left ")]
    assert any(str(world.state) in c for c in left)
    assert any("RECENT.md" in c for c in left) and any("store" in c for c in left)


def hook_dir() -> Path:
    return Path(os.environ["HOME"]) / ".openclaw" / "hooks" / "memfuse-recent"


def openclaw_config() -> dict[str, object]:
    path = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    return dict(json.loads(path.read_text())) if path.exists() else {}


def test_the_recent_md_hook_comes_and_goes_with_the_schedule(
    world: World, gateway: Gateway
) -> None:
    """Issue 40: OpenClaw never loads RECENT.md; an agent:bootstrap hook adds it."""
    agents_md = world.workspace / "AGENTS.md"
    agents_md.write_text("# my rules\n")
    memory_md = world.workspace / "MEMORY.md"
    before = memory_md.read_bytes() if memory_md.exists() else None
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    assert "agent:bootstrap" in (hook_dir() / "HOOK.md").read_text()
    assert "RECENT.md" in (hook_dir() / "handler.js").read_text()
    # what `hooks enable` writes, in one write through the Gateway (issue 57: less CPU)
    assert gateway.patches() == [
        {"hooks": {"internal": {"enabled": True, "entries": {"memfuse-recent": {"enabled": True}}}}}
    ]
    assert gateway.calls("config") == []
    assert openclaw_config()["hooks"] == {
        "internal": {"enabled": True, "entries": {"memfuse-recent": {"enabled": True}}}
    }
    assert any("RECENT.md joins every main session" in c for c in out.data["changes"])
    gateway.forget_calls()
    again = world.json("cron", "--format", "openclaw", "--install")
    assert gateway.calls("hooks") == [] and not any(
        c.startswith("wrote") for c in again.data["changes"]
    )
    removed = world.json("cron", "--format", "openclaw", "--remove")
    assert removed.code == 0, removed.stdout
    assert gateway.patches() == [{"hooks": None}] and gateway.calls("config") == []
    assert not hook_dir().exists()
    assert "hooks" not in openclaw_config()  # as memfuse found it (issue 55: not `"hooks": {}`)
    assert agents_md.read_text() == "# my rules\n"
    assert (memory_md.read_bytes() if memory_md.exists() else None) == before


def test_the_hook_respects_internal_hooks_turned_off_and_keeps_the_users_master_switch(
    world: World, gateway: Gateway
) -> None:
    config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"hooks": {"internal": {"enabled": False}}}))
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0 and gateway.calls("hooks") == []
    assert any("internal hooks are turned off" in c for c in out.data["changes"])
    assert not hook_dir().exists()
    mine = {"enabled": True, "entries": {"session-memory": {"enabled": True}}}
    config.write_text(json.dumps({"hooks": {"internal": mine}}))
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    assert world.json("cron", "--format", "openclaw", "--remove").code == 0
    assert openclaw_config()["hooks"] == {"internal": mine}  # the user's switch and entry


def test_a_hook_folder_memfuse_did_not_write_is_never_overwritten(
    world: World, gateway: Gateway
) -> None:
    hook_dir().mkdir(parents=True)
    (hook_dir() / "HOOK.md").write_text("---\nname: memfuse-recent\n---\nmine\n")
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 1 and "memfuse did not write" in out.data["error"]
    assert (hook_dir() / "HOOK.md").read_text().endswith("mine\n")


@pytest.mark.skipif(shutil.which("node") is None, reason="no node to run the hook's handler")
def test_the_handler_adds_recent_md_to_main_sessions_only(tmp_path: Path) -> None:
    """The handler as OpenClaw calls it (an `agent:bootstrap` event, a mutable bootstrapFiles):
    RECENT.md joins main and direct sessions, never group, channel or cron ones."""
    from memfuse.schedule.openclaw import hook

    (tmp_path / "handler.mjs").write_text(hook.HANDLER_JS)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "RECENT.md").write_text("# Recent\n- Alice prefers release notes in English\n")
    script = tmp_path / "run.mjs"
    script.write_text(
        'import handler from "./handler.mjs";\n'
        "const out = {};\n"
        'for (const key of ["agent:main:main", "agent:main:telegram:direct:7",\n'
        '  "agent:main:discord:group:9", "agent:main:cron:job:run:1"]) {\n'
        '  const ctx = {workspaceDir: process.argv[2], bootstrapFiles: [{name: "AGENTS.md",\n'
        '    path: "/x/AGENTS.md", content: "rules", missing: false}]};\n'
        '  await handler({type: "agent", action: "bootstrap", sessionKey: key, context: ctx});\n'
        "  out[key] = ctx.bootstrapFiles.map((f) => [f.name, f.content]);\n"
        "}\n"
        "console.log(JSON.stringify(out));\n"
    )
    done = subprocess.run(
        ["node", str(script), str(ws)], capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(done.stdout)
    recent = seen["agent:main:main"][-1]  # framed as data: test_hook_framing_flow.py
    assert recent[0] == "RECENT.md" and "\n- Alice prefers release notes in English\n" in recent[1]
    assert seen["agent:main:main"][:-1] == [["AGENTS.md", "rules"]]
    assert seen["agent:main:telegram:direct:7"][-1] == recent
    assert seen["agent:main:discord:group:9"] == [["AGENTS.md", "rules"]]
    assert seen["agent:main:cron:job:run:1"] == [["AGENTS.md", "rules"]]
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-not-for-the-model\n")
    (ws / "RECENT.md").unlink()
    (ws / "RECENT.md").symlink_to(secret)  # the agent repointed it
    linked = json.loads(
        subprocess.run(
            ["node", str(script), str(ws)], capture_output=True, text=True, timeout=60, check=True
        ).stdout
    )
    assert linked["agent:main:main"] == [["AGENTS.md", "rules"]]
    (ws / "RECENT.md").unlink()
    os.link(secret, ws / "RECENT.md")  # a second name of the same file
    hard = subprocess.run(
        ["node", str(script), str(ws)], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(hard.stdout)["agent:main:main"] == [["AGENTS.md", "rules"]]
    (ws / "RECENT.md").unlink()
    os.mkfifo(ws / "RECENT.md")  # nobody writes it: a blocking open would never return
    fifo = subprocess.run(
        ["node", str(script), str(ws)], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(fifo.stdout)["agent:main:main"] == [["AGENTS.md", "rules"]]


def test_a_dreaming_job_without_a_zone_runs_in_the_gateways_not_the_installing_shells(
    world: World, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dreaming at 03:00 on a UTC Gateway and tidy at 03:00 in Shanghai are 8 hours apart."""
    from memfuse.schedule.openclaw import host

    monkeypatch.setattr(host, "system_zone", lambda: "Etc/UTC")
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    gateway.put(DREAMING)
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    tidy = next(j for j in ours(gateway, world) if key_of(j).endswith("-tidy"))
    assert tidy["schedule"] == {"kind": "cron", "expr": "0 3 * * *", "staggerMs": 0,
                                "tz": "Asia/Shanghai"}  # fmt: skip
    assert not [n for n in out.data["notes"] if "moved" in n]


def test_status_says_failures_reach_nobody_without_a_channel(
    world: World, gateway: Gateway
) -> None:
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    view = world.json("status").data["schedule"]
    assert view["format"] == "openclaw" and "openclaw cron list" in view["where"]
    assert "NOT announced" in view["alerts"]
    assert "failures: a failed run is NOT announced" in world.run("status").stdout


def test_openclaw_is_known_by_its_program_when_it_has_no_config_yet(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40: OpenClaw is detected by its own program and configuration, not the folder."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    bin_dir = tmp_path / "only-openclaw"
    bin_dir.mkdir()
    (bin_dir / "openclaw").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "openclaw").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    out = world.json("cron")
    assert tidy_line(out.data["text"]).startswith("30 3 * * * ")  # its default dreaming


def test_status_reads_the_alert_route_when_asked_not_the_copy_made_at_install(
    world: World, gateway: Gateway
) -> None:
    """Issue 47: after the user added the webhook memfuse suggests, status still said "NOT
    announced … no channel" (copied into schedule.json at install)."""
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    assert "NOT announced" in world.json("status").data["schedule"]["alerts"]
    config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "cron": {"failureAlert": {
        "mode": "webhook", "to": "https://hooks.example.invalid/memfuse"}}}))  # fmt: skip
    view = world.json("status").data["schedule"]
    assert view["alerts"].startswith("a failed run: OpenClaw posts them to the webhook")
    assert "NOT announced" not in world.run("status").stdout


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8080/alert", "http://192.168.1.20/hook", "http://nas.local/x",
            "http://[::1]/x", "http://localhost:9/x"],
)  # fmt: skip
def test_status_says_a_webhook_the_gateways_ssrf_policy_blocks_is_not_delivered(
    world: World, gateway: Gateway, url: str
) -> None:
    """Issue 55: a loopback or LAN webhook (what the hint led to) is blocked by the Gateway
    (`[security] blocked URL fetch … private/internal`) while status said "OpenClaw posts
    them to the webhook"; it says the route is blocked and how to allow it."""
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    before = json.loads(config.read_text())
    alert = {"failureAlert": {"mode": "webhook", "to": url}}
    config.write_text(json.dumps({**before, "cron": alert}))
    said = world.json("status").data["schedule"]["alerts"]
    assert said.startswith("a failed run is NOT delivered: OpenClaw's Gateway blocks"), said
    assert "cron.webhookSsrfPolicy.allowedHostnames" in said
    allowed = {**alert, "webhookSsrfPolicy": {"dangerouslyAllowPrivateNetwork": True}}
    config.write_text(json.dumps({**before, "cron": allowed}))
    said = world.json("status").data["schedule"]["alerts"]
    assert said.startswith("a failed run: OpenClaw posts them to the webhook"), said


def test_remove_names_the_mcp_server_entry_that_starts_memfuse_serve(
    world: World, gateway: Gateway
) -> None:
    """Issue 47: `--remove` left `mcp.servers.memfuse` without a word. memfuse never writes
    it (the user did, from docs/serve.md): it is named with the command that removes it."""
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    serve = {"command": "/home/agent/.local/bin/memfuse",
             "args": ["serve", "-w", str(world.workspace)]}  # fmt: skip
    other = {"command": "npx", "args": ["some-other-server"]}
    config.write_text(json.dumps({**json.loads(config.read_text()),
                                  "mcp": {"servers": {"memfuse": serve, "docs": other}}}))  # fmt: skip
    out = world.json("cron", "--format", "openclaw", "--remove")
    said = [c for c in out.data["changes"] if "mcp.servers" in c]
    assert len(said) == 1, out.data["changes"]
    assert said[0].startswith("left OpenClaw's MCP server mcp.servers.memfuse (this workspace)")
    assert "`openclaw config unset mcp.servers.memfuse`" in said[0]
    assert json.loads(config.read_text())["mcp"]["servers"]["memfuse"] == serve  # the user's


def test_install_and_remove_cost_few_openclaw_calls_each_job_one(
    world: World, gateway: Gateway
) -> None:
    """Issue 47: install took 64-89 s and --remove 89 s, every `openclaw` call starting Node
    (a list, an add and an edit per job, the hook's calls, a second list on removal). Now a
    job is declared with its failure alert in one call, a job already in place costs none,
    and the list is read once."""
    first = world.json("cron", "--format", "openclaw", "--install")
    assert first.code == 0, first.stdout
    every = gateway.calls()
    adds = [c for c in every if c[:4] == ["gateway", "call", "cron.add", "--json"]]
    assert len(adds) == 3 and gateway.calls("cron", "edit") == []
    assert all(json.loads(c[4].split("=", 1)[1])["failureAlert"] == {"after": 1} for c in adds)
    assert len(gateway.calls("cron", "list")) == 1
    assert len(every) <= 6, every  # before: 9
    assert all(j["failureAlert"] == {"after": 1} for j in ours(gateway, world))
    gateway.forget_calls()
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    assert [c[:2] for c in gateway.calls()] == [["cron", "list"]]  # before: 6, then 2
    gateway.forget_calls()
    out = world.json("cron", "--format", "openclaw", "--remove")
    assert out.code == 0, out.stdout
    assert len(gateway.calls("cron", "list")) == 1  # before: 2
    # The hook's settings read by memfuse itself, its own entry and switch unset in one write
    # where there were four calls, one after the other (review of 47 and 50).
    assert gateway.calls("hooks") + gateway.calls("config") == []
    assert gateway.patches() == [{"hooks": None}]
    assert len(gateway.calls("cron", "rm")) == 3 and ours(gateway, world) == []


def test_a_job_the_user_disabled_stays_disabled_and_a_changed_one_is_declared_again(
    world: World, gateway: Gateway
) -> None:
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    jobs = gateway.jobs
    for job in jobs:
        if key_of(job).endswith("-sync"):
            job["enabled"] = False
        if key_of(job).endswith("-tidy"):
            job["schedule"] = {**job["schedule"], "expr": "0 4 * * *"}  # edited by hand
    gateway.put(*jobs)
    gateway.forget_calls()
    again = world.json("cron", "--format", "openclaw", "--install")
    assert again.code == 0, again.stdout
    declared = [json.loads(c[4].split("=", 1)[1]) for c in gateway.calls("gateway", "call")
                if c[2] == "cron.add"]  # fmt: skip
    assert [key_of(p).rsplit("-", 1)[1] for p in declared] == ["tidy"]
    assert "enabled" not in declared[0]
    sync, _, tidy = ours(gateway, world)
    assert sync["enabled"] is False and tidy["schedule"]["expr"] != "0 4 * * *"


def test_a_json5_config_gives_the_agent_and_one_that_cannot_be_read_is_said(
    world: World, gateway: Gateway
) -> None:
    """Issue 50: openclaw.json is JSON5 (OpenClaw's docs write it with unquoted keys, single
    quotes and trailing commas); read as JSONC it lost every setting, silently."""
    config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "// hand-edited\n{\n  agents: {\n    entries: {\n      home: { workspace: '/elsewhere', },\n"
        f'      work: {{ workspace: "{world.workspace}" }},\n    }},\n  }},\n'
        "  cron: { failureAlert: { mode: 'webhook', to: 'https://hooks.example.invalid/x' } },\n}\n"
    )
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    assert [j["agentId"] for j in ours(gateway, world)] == ["work"] * 3
    assert any("posts them to the webhook" in c for c in out.data["changes"])
    assert out.envelope["warnings"] == []
    config.write_text("{ agents: { entries: { work: { workspace: '" + str(world.workspace))
    printed = world.json("cron", "--format", "openclaw")  # OpenClaw's CLI would refuse it
    (said,) = printed.envelope["warnings"]
    assert f"OpenClaw's configuration {config} is not JSON5" in said
    assert "takes OpenClaw's defaults" in said
    assert "agentId" not in printed.data["text"]


def test_a_json5_config_openclaw_rewrites_is_kept_as_it_was_and_said(
    world: World, gateway: Gateway
) -> None:
    """Issue 55: OpenClaw's `hooks enable` (and `config unset`) rewrite openclaw.json as plain
    JSON, dropping the user's comments, and its own `.bak` lasts one write: memfuse keeps a
    copy beside it (the user's only, 0600: it may hold keys) and says where."""
    config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    text = "// my Gateway, by hand\n{ gateway: { port: 18789, }, }\n"
    config.write_text(text)
    out = world.json("cron", "--format", "openclaw", "--install")
    (said,) = [c for c in out.data["changes"] if "dropping its comments" in c]
    kept = Path(said.rsplit(" in ", 1)[1])
    assert kept.parent == config.parent and kept.read_text() == text
    assert kept.stat().st_mode & 0o777 == 0o600
    assert gateway.patches()  # the rewrite happened after the copy
    removed = world.json("cron", "--format", "openclaw", "--remove")
    assert not [c for c in removed.data["changes"] if "dropping its comments" in c]  # JSON now
    assert openclaw_config() == {"gateway": {"port": 18789}}  # nothing of memfuse's left


def test_removal_unsets_the_switch_with_the_entry_and_keeps_the_users_other_hook_settings(
    world: World, gateway: Gateway
) -> None:
    """Review of issues 47 and 50: `hooks.internal` holding a setting of the user's besides
    memfuse's entry and switch is not unset whole; the switch memfuse set goes in the same
    write as the entry (the entry first would pass through the open-ended state that loads
    every hook)."""
    config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("{ hooks: { internal: { load: { extraDirs: ['/opt/hooks'] } } } }")
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    gateway.forget_calls()
    assert world.json("cron", "--format", "openclaw", "--remove").code == 0
    assert gateway.calls("hooks") + gateway.calls("config") == []  # before: 3 in turn
    assert gateway.patches() == [
        {"hooks": {"internal": {"entries": {"memfuse-recent": None}, "enabled": None}}}
    ]
    assert openclaw_config()["hooks"] == {
        "internal": {"load": {"extraDirs": ["/opt/hooks"]}, "entries": {}}
    }


def test_a_removal_whose_write_the_gateway_refuses_keeps_the_hook_and_says_so(
    world: World, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 57: the hook's write is made on the revision read beside the job list; when
    openclaw.json changes in between, the Gateway refuses it. The hook's folder then stays
    (its entry without its folder is a hook OpenClaw cannot load), the removal says so, and
    running it again finishes it."""
    assert world.json("cron", "--format", "openclaw", "--install").code == 0
    answer = gateway.run

    def edited_meanwhile(argv: list[str], **how: Any) -> subprocess.CompletedProcess[str]:
        if argv[3:4] == ["config.patch"]:
            config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
            config.write_text(json.dumps({**openclaw_config(), "ui": {"theme": "dark"}}))
        return answer(argv, **how)

    monkeypatch.setattr(gateway, "run", edited_meanwhile)
    world.tool = functools.partial(run_tool, run=gateway.run)
    out = world.json("cron", "--format", "openclaw", "--remove")
    assert out.code == 0, out.stdout
    assert any("left the OpenClaw hook memfuse-recent in place" in c for c in out.data["changes"])
    assert (hook_dir() / "HOOK.md").exists()
    assert openclaw_config()["hooks"]["internal"]["entries"] == {
        "memfuse-recent": {"enabled": True}
    }
    world.tool = functools.partial(run_tool, run=answer)
    assert world.json("cron", "--format", "openclaw", "--remove").code == 0
    assert not hook_dir().exists() and "hooks" not in openclaw_config()
    assert openclaw_config()["ui"] == {"theme": "dark"}


def test_hooks_turned_off_in_an_included_file_are_read_and_an_unread_include_asked(
    world: World, gateway: Gateway
) -> None:
    """Issue 50: memfuse follows OpenClaw's `$include`, so internal hooks turned off in an
    included file are read without asking `openclaw config get`; a config whose include it
    cannot read is asked of OpenClaw, as before, and a refusal stays one."""
    config = Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    (config.parent / "more.json5").write_text("{ internal: { enabled: false } }")
    config.write_text("{ hooks: { $include: './more.json5' } }")
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    assert gateway.calls("config", "get") == [] and gateway.calls("hooks") == []
    assert any("internal hooks are turned off" in c for c in out.data["changes"])
    # The stand-in's `config get` reads the one file; OpenClaw's would read the included one.
    config.write_text(json.dumps({"$include": "./gone.json5",
                                  "hooks": {"internal": {"enabled": False}}}))  # fmt: skip
    out = world.json("cron", "--format", "openclaw", "--install")
    assert out.code == 0, out.stdout
    assert gateway.calls("config", "get") == [["config", "get", "hooks.internal", "--json"]]
    assert gateway.calls("hooks") == []
    assert any("internal hooks are turned off" in c for c in out.data["changes"])
