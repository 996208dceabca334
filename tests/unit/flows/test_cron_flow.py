"""`memfuse cron`: the schedule in every format, installed beside what is there, checked the
way each scheduler runs it, and the docs that must agree."""

from __future__ import annotations

import json
import plistlib
import re
import shlex
import shutil
import stat
from datetime import datetime
from pathlib import Path

import pytest

from memfuse.schedule import base, crontab, launchd, plan, registry
from memfuse.schedule.base import Machine, run_tool
from memfuse.schedule.install import SCHEDULE_FILE
from memfuse.schedule.runs import Schedule
from memfuse.schedule.trial import subcommand
from memfuse.settings import Settings
from memfuse.state.folder import default_state_dir
from tests.conftest import ROOT
from tests.fakes import World

HOME = Path("/home/agent")
EXAMPLE = Settings(
    workspace=HOME / ".openclaw" / "workspace",
    now=datetime(2026, 12, 3, 12).astimezone(),
    mcporter="mcporter",
    mcporter_config=HOME / ".mcporter" / "mcporter.json",
    state_dir=default_state_dir(HOME / ".openclaw" / "workspace", {"HOME": str(HOME)}),
)
FOUND = {
    "mcporter": str(HOME / ".local/share/mcporter/node_modules/.bin/mcporter"),
    "node": "/usr/bin/node",
}
USERS_CRONTAB = "MAILTO=me@example.invalid\n# my backup\n30 1 * * * /usr/bin/backup --all\n"


def files_of(schedule: Schedule, fmt: str, settings: Settings) -> dict[str, str]:
    """The schedule rendered by one scheduler of the registry, as `memfuse cron` prints it."""
    machine = Machine(
        env={}, home=HOME, tool=run_tool, which=lambda _name: None,
        backup=lambda _name, _text: "", state_dir=settings.state_dir,
        alert_failed_runs=settings.alert_failed_runs,
        alert_max_age_hours=settings.alert_max_age_hours,
    )  # fmt: skip
    return registry.get(fmt).render(schedule, machine)


def example_crontab(**options: bool) -> str:
    schedule = plan.build(
        EXAMPLE, memfuse=[str(HOME / ".local/bin/memfuse")], which=FOUND.get, **options
    )
    return files_of(schedule, "crontab", EXAMPLE)["crontab"]


def job_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^[0-9]", line)]


def test_the_crontab_names_everything_absolutely_and_redirects_nothing() -> None:
    text = example_crontab()
    jobs = job_lines(text)
    assert [line.split()[6] for line in jobs] == ["sync", "surface", "tidy"]
    assert [" ".join(line.split()[:5]) for line in jobs] == [
        "0 14,22 * * *", "5 14,22 * * *", "0 3 * * *",
    ]  # fmt: skip
    for line in jobs:
        assert line.split()[5] == "/home/agent/.local/bin/memfuse"
        assert " -q --wait 300 " in line  # runs that meet wait for the lock, tidy too
        assert "--workspace /home/agent/.openclaw/workspace" in line
        assert f"--mcporter {FOUND['mcporter']}" in line
        assert "--mcporter-config /home/agent/.mcporter/mcporter.json" in line
        assert ">" not in line and "2>&1" not in line and "||" not in line
        assert "--archive" not in line
    label = plan.label_for(EXAMPLE.workspace)
    assert text.splitlines()[0] == f"# >>> memfuse {label} >>>"
    assert text.splitlines()[-1] == f"# <<< memfuse {label} <<<"
    path = re.search(r"^PATH=(.*)$", text, re.M)
    assert path is not None
    assert path.group(1).split(":")[:3] == [
        "/usr/bin", "/home/agent/.local/share/mcporter/node_modules/.bin", "/home/agent/.local/bin",
    ]  # fmt: skip
    assert "--archive" in job_lines(example_crontab(archive=True))[-1]


def test_a_percent_sign_is_escaped_and_read_back() -> None:
    settings = Settings(workspace=Path("/srv/100%/ws"), now=EXAMPLE.now)
    schedule = plan.build(settings, memfuse=["/opt/memfuse"], which=FOUND.get)
    text = files_of(schedule, "crontab", settings)["crontab"]
    assert "100%" not in text.replace("\\%", "")  # every % escaped: cron reads it as a newline
    assert all("/srv/100%/ws" in job.argv for job in crontab.parse(text))


def test_check_reads_assignments_and_runs_only_memfuse_jobs() -> None:
    text = (
        'PATH = "/opt/bin:/usr/bin"\n'
        "MAILTO=ops@example.invalid\n"
        "0 1 * * * /usr/bin/backup --all\n"
        "@daily MEMFUSE_WORKSPACE=/w memfuse tidy -q\n"
        "0 14 * * * memfuse sync -q >> /w/cron.log 2>&1 || echo failed\n"
    )
    jobs = crontab.parse(text)
    assert [j.source for j in jobs] == ["line 3", "line 4", "line 5"]
    assert dict(jobs[0].env) == {"PATH": "/opt/bin:/usr/bin", "MAILTO": "ops@example.invalid"}
    assert jobs[1].argv == ("memfuse", "tidy", "-q") and ("MEMFUSE_WORKSPACE", "/w") in jobs[1].env
    assert jobs[2].argv == ("memfuse", "sync", "-q")  # the shell part is not run
    assert [subcommand(j.argv)[0] for j in jobs] == [None, "tidy", "sync"]
    assert subcommand(("/usr/bin/python3", "-m", "memfuse", "sync"))[0] == "sync"
    assert subcommand(("/bin/rm", "-m", "memfuse", "sync"))[0] is None


def test_check_flags_stderr_sent_away_from_cron_mail(world: World, tmp_path: Path) -> None:
    old = tmp_path / "old.cron"
    old.write_text(
        "PATH=/nonexistent\n0 14 * * * memfuse sync -q >> /w/cron.log 2>&1 || echo failed\n"
    )
    out = world.run("cron", "--check", str(old))
    assert out.code == 1
    assert "line 2: FAIL" in out.stdout
    assert "stderr is redirected away from the scheduler's mail" in out.stdout
    assert "memfuse is not on this job's PATH (/nonexistent)" in out.stdout


def test_cron_prints_the_crontab_even_under_quiet(world: World) -> None:
    out = world.run("cron", "-q", "--archive")
    assert out.code == 0
    assert f"--workspace {world.workspace}" in out.stdout
    assert "tidy -q --wait 300 --archive" in out.stdout


def test_the_example_crontab_is_what_memfuse_cron_prints() -> None:
    example = (ROOT / "examples" / "crontab.txt").read_text()
    assert example == example_crontab()


def test_the_docs_show_the_same_schedule_and_flags_as_memfuse_cron() -> None:
    operations = (ROOT / "docs" / "operations.md").read_text()
    for line in job_lines(example_crontab()):
        fields = line.split()
        schedule = " ".join(fields[:5])
        flags = " ".join(fields[6 : fields.index("--workspace")])
        assert f"| `{schedule}` | `memfuse {flags}` |" in operations, (schedule, flags)


# --- installing beside what is there -------------------------------------------------------


def tool(bin_dir: Path, name: str, script: str) -> None:
    """A stand-in for a scheduler's command on PATH, recording its calls."""
    path = bin_dir / name
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {bin_dir}/calls\n{script}\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def fake_crontab(bin_dir: Path, current: str | None) -> Path:
    table = bin_dir / "table"
    if current is not None:
        table.write_text(current)
    tool(
        bin_dir,
        "crontab",
        f"""
if [ "$1" = -l ]; then
    [ -f {table} ] || {{ echo "no crontab for agent" >&2; exit 1; }}
    cat {table}
else
    cat > {table}
fi""",
    )
    return table


def test_install_merges_into_the_users_crontab_keeps_a_copy_and_shows_the_change(
    world: World, tools: Path
) -> None:
    table = fake_crontab(tools, USERS_CRONTAB)
    out = world.json("cron", "--install")
    assert out.code == 0, out.stdout
    installed = table.read_text()
    assert installed.startswith(USERS_CRONTAB)  # the user's lines, byte for byte, first
    assert [job.argv[1] for job in crontab.parse(installed)[1:]] == ["sync", "surface", "tidy"]
    changes = out.data["changes"]
    assert any(c.startswith("+0 14,22 * * * ") for c in changes)  # the diff
    kept = next(c for c in changes if "kept in" in c).split("kept in ")[1]
    assert Path(kept).read_text() == USERS_CRONTAB
    again = world.json("cron", "--install")
    assert "nothing changed" in again.data["changes"][0]
    assert table.read_text() == installed
    removed = world.json("cron", "--remove")
    assert removed.code == 0 and table.read_text() == USERS_CRONTAB


def test_install_into_no_crontab_at_all(world: World, tools: Path) -> None:
    table = fake_crontab(tools, None)
    assert world.json("cron", "--install").code == 0
    assert len(crontab.parse(table.read_text())) == 3


def test_a_broken_marker_pair_is_refused_not_guessed(world: World, tools: Path) -> None:
    label = plan.label_for(world.workspace)
    broken = USERS_CRONTAB + f"# >>> memfuse {label} >>>\n0 1 * * * /usr/bin/mine\n"
    table = fake_crontab(tools, broken)
    out = world.json("cron", "--install")
    assert out.code == 1 and "markers" in out.data["error"]
    assert table.read_text() == broken


def test_systemd_timers_are_written_beside_the_users_units_and_enabled(
    world: World, tools: Path, tmp_path: Path, dry_runs: list[list[str]]
) -> None:
    tool(tools, "systemctl", "exit 0")
    units = tmp_path / "config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "backup.timer").write_text("[Timer]\nOnCalendar=daily\n")
    out = world.json("cron", "--format", "systemd", "--install")
    assert out.code == 0, out.stdout
    label = plan.label_for(world.workspace)
    written = sorted(p.name for p in units.iterdir())
    assert written == sorted(
        ["backup.timer"]
        + [f"{label}-{run}.{kind}" for run in ("sync", "surface", "tidy")
           for kind in ("service", "timer")]
    )  # fmt: skip
    assert "Persistent=true" in (units / f"{label}-tidy.timer").read_text()  # catch-up
    calls = (tools / "calls").read_text()
    assert "--user daemon-reload" in calls and "enable --now" in calls
    assert (units / "backup.timer").read_text() == "[Timer]\nOnCalendar=daily\n"
    checked = world.json("cron", "--format", "systemd", "--check", str(units))
    assert [j["job"] for j in checked.data["jobs"] if j["job"] != "systemd-analyze verify"] == [
        f"{label}-{run}.service" for run in ("surface", "sync", "tidy")
    ]
    assert [subcommand(tuple(argv))[0] for argv in dry_runs] == ["surface", "sync", "tidy"]
    assert world.json("cron", "--format", "systemd", "--remove").code == 0
    assert sorted(p.name for p in units.iterdir()) == ["backup.timer"]


def test_a_unit_memfuse_did_not_write_is_never_overwritten(
    world: World, tools: Path, tmp_path: Path
) -> None:
    tool(tools, "systemctl", "exit 0")
    units = tmp_path / "config" / "systemd" / "user"
    units.mkdir(parents=True)
    mine = units / f"{plan.label_for(world.workspace)}-sync.service"
    mine.write_text("[Service]\nExecStart=/usr/bin/mine\n")
    out = world.json("cron", "--format", "systemd", "--install")
    assert out.code == 1 and "memfuse did not write" in out.data["error"]
    assert mine.read_text() == "[Service]\nExecStart=/usr/bin/mine\n"
    assert sorted(p.name for p in units.iterdir()) == [mine.name]  # nothing else either


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_the_generated_units_pass_systemd_analyze_verify(
    world: World, dry_runs: list[list[str]]
) -> None:
    out = world.json("cron", "--format", "systemd", "--check")
    verify = next(j for j in out.data["jobs"] if j["job"] == "systemd-analyze verify")
    assert verify["ok"], verify["problems"]


def test_launchd_agents_are_property_lists_with_the_runs_times(
    world: World,
    tools: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    dry_runs: list[list[str]],
) -> None:
    monkeypatch.setattr(launchd, "agents_dir", lambda _machine: tmp_path / "LaunchAgents")
    tool(tools, "launchctl", "exit 0")
    out = world.json("cron", "--format", "launchd", "--install")
    assert out.code == 0, out.stdout
    plists = {p.name: plistlib.loads(p.read_bytes()) for p in (tmp_path / "LaunchAgents").iterdir()}
    by_run = {job["ProgramArguments"][1]: job for job in plists.values()}
    assert by_run["sync"]["StartCalendarInterval"] == [
        {"Hour": 14, "Minute": 0}, {"Hour": 22, "Minute": 0},
    ]  # fmt: skip
    assert all(f"{job['Label']}.plist" in plists for job in plists.values())
    assert "bootstrap" in (tools / "calls").read_text()
    checked = world.json("cron", "--format", "launchd", "--check", str(tmp_path / "LaunchAgents"))
    assert len(checked.data["jobs"]) == len(dry_runs) == 3


def test_openclaw_jobs_printed_are_cron_add_parameters(world: World) -> None:
    """Installing them is tests/unit/flows/test_openclaw_install_flow.py."""
    printed = world.json("cron", "--format", "openclaw")
    jobs = json.loads(next(iter(printed.data["files"].values())))
    assert sorted(job["payload"]["argv"][1] for job in jobs) == sorted(plan.LIFECYCLE)
    for job in jobs:  # the shape of OpenClaw's cron.add (docs/automation/cron-jobs.md)
        assert set(job) >= {"name", "schedule", "sessionTarget", "payload", "delivery"}
        assert job["schedule"]["kind"] == "cron" and len(job["schedule"]["expr"].split()) == 5
        assert job["payload"]["kind"] == "command" and job["payload"]["argv"][1] in plan.LIFECYCLE
        run = job["payload"]["argv"][1]
        assert job["declarationKey"] == f"memfuse:{plan.label_for(world.workspace)}-{run}"
        assert job["name"] == f"memfuse {run} ({world.workspace.name})"  # what an alert says
        assert job["failureAlert"] == {"after": 1}


def test_an_installed_schedule_is_recorded_for_status(world: World, tools: Path) -> None:
    fake_crontab(tools, None)
    assert world.json("cron", "--install").code == 0
    record = json.loads((world.state / SCHEDULE_FILE).read_text())
    assert record["runs"]["tidy"] == ["03:00"] and record["format"] == "crontab"
    assert world.json("cron", "--remove").code == 0
    assert not (world.state / SCHEDULE_FILE).exists()


def test_the_hostile_workspace_path_survives_every_format(tmp_path: Path) -> None:
    """A folder name with quotes, `%`, `$` and spaces reaches memfuse as it is, in each."""
    odd = tmp_path / 'it\'s 100% "$HOME" a b'
    settings = Settings(workspace=odd, now=EXAMPLE.now)
    schedule = plan.build(settings, memfuse=["/opt/memfuse"], which=FOUND.get)
    for fmt in registry.names():
        files = files_of(schedule, fmt, settings)
        jobs = registry.get(fmt).read(files)
        assert jobs and all(str(odd) in job.argv for job in jobs), fmt


def test_status_flags_a_tidy_that_missed_its_schedule_before_the_escalation(
    world: World, tools: Path
) -> None:
    """The laptop slept through 03:00: an hour later status says so, a day before the alarm."""
    fake_crontab(tools, None)
    assert world.json("cron", "--install", "--now", "2026-12-01T12:00").code == 0
    assert world.run("tidy", "-q", "--now", "2026-12-02T03:00").code == 0
    assert world.run("sync", "-q", "--now", "2026-12-02T22:00").code == 0
    assert world.run("surface", "-q", "--now", "2026-12-02T22:05").code == 0
    on_time = world.json("status", "--now", "2026-12-03T03:30")
    assert on_time.data["commands"]["tidy"]["missed"] is None  # 03:00 today is not late yet
    late = world.json("status", "--now", "2026-12-03T09:00")
    assert late.code == 0  # not an alarm yet: the 24 h escalation stays the one that pages
    assert late.data["commands"]["tidy"]["missed"].startswith("2026-12-03T03:00")
    assert any("tidy missed its 03:00 run" in w for w in late.envelope["warnings"])
    assert "missed its scheduled run" in world.run("status", "--now", "2026-12-03T09:00").stdout
    assert world.run("tidy", "-q", "--now", "2026-12-03T09:05").code == 0
    assert (
        world.json("status", "--now", "2026-12-03T09:10").data["commands"]["tidy"]["missed"] is None
    )


def test_without_an_installed_schedule_nothing_is_missed(world: World) -> None:
    assert world.run("tidy", "-q", "--now", "2026-12-01T03:00").code == 0
    out = world.json("status", "--now", "2026-12-01T20:00")
    assert all(view["missed"] is None for view in out.data["commands"].values())


def test_status_reads_an_odd_schedule_record_once_and_says_what_it_cannot_use(
    world: World,
) -> None:
    """The record is state, read as untrusted: an unknown zone is said and the local rules
    count the missed runs; a time that is not HH:MM is skipped; a record that is not JSON is
    said, and nothing is counted from it."""
    assert world.run("tidy", "-q", "--now", "2026-12-01T03:00").code == 0
    record = {
        "format": "crontab", "zone": "Mars/Olympus", "installed": "2026-11-30T12:00:00+00:00",
        "runs": {"tidy": ["03:00", "25:00", 7], "sync": "14:00"}, "where": "w" * 600,
    }  # fmt: skip
    (world.state / SCHEDULE_FILE).write_text(json.dumps(record))
    out = world.json("status", "--now", "2026-12-03T09:00")
    warnings = out.envelope["warnings"]
    assert any("zone 'Mars/Olympus' is unknown" in w for w in warnings)
    assert out.data["commands"]["tidy"]["missed_runs"] == 2  # 12-02 and 12-03 at 03:00
    assert out.data["commands"]["sync"]["missed"] is None
    schedule = out.data["schedule"]
    assert schedule["zone"] == "Mars/Olympus" and len(schedule["where"]) == 500
    assert schedule["next_command"] == "tidy"
    (world.state / SCHEDULE_FILE).write_text("{not json")
    out = world.json("status", "--now", "2026-12-03T09:00")
    assert any("schedule cannot be read" in w for w in out.envelope["warnings"])
    assert all(view["missed"] is None for view in out.data["commands"].values())
    assert out.data["schedule"] == {"installed": False}


def test_check_never_runs_a_program_that_is_only_named_memfuse(
    world: World, tmp_path: Path
) -> None:
    """A job file may be the agent's: a script called memfuse, or this memfuse with a
    PYTHONPATH of the agent's, must not run with the user's rights."""
    pwned = tmp_path / "pwned"
    fake = tmp_path / "bin" / "memfuse"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\ntouch {pwned}\n")
    fake.chmod(0o755)
    evil = tmp_path / "evil" / "memfuse"
    evil.mkdir(parents=True)
    (evil / "__init__.py").write_text(f"open({str(pwned)!r}, 'w').close()\n")
    ours = shlex.join(plan.memfuse_command())
    jobs = tmp_path / "jobs.cron"
    jobs.write_text(
        f"0 14 * * * {fake} sync -q\n"
        f"0 22 * * * PYTHONPATH={evil.parent} {ours} sync -q -w {world.workspace}\n"
    )
    out = world.json("cron", "--check", str(jobs))
    assert not pwned.exists()
    problems = [p for job in out.data["jobs"] for p in job["problems"] + job["findings"]]
    assert any("not this memfuse" in p and "not run" in p for p in problems)
    assert any("sets PYTHONPATH" in p for p in problems)


def test_a_fifo_where_a_schedule_file_is_read_is_refused_not_waited_on(
    world: World, tmp_path: Path
) -> None:
    import os

    fifo = tmp_path / "jobs.cron"
    os.mkfifo(fifo)  # a blocking read would wait for a writer forever
    out = world.json("cron", "--check", str(fifo))
    assert out.code != 0
    assert "FIFO" in out.data["error"] or "regular file" in out.data["error"]


def planted(folder: Path, name: str, marker: Path) -> Path:
    """A program of the agent's that proves it ran by touching `marker`."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(f"#!/bin/sh\necho {name} >> {marker}\necho '{{}}'\n")
    program.chmod(0o755)
    return program


def test_check_runs_nothing_the_job_names_and_reports_what_it_would_change(
    world: World, tmp_path: Path
) -> None:
    """Issue 33: a job list the agent wrote named a workspace --mcporter, a workspace
    MEMFUSE_MCPORTER_CONFIG, or put a workspace folder first on PATH, and all three ran
    when the operator checked it. Now the trial runs this memfuse with the operator's own
    settings, and every such setting is a finding instead."""
    ws = world.workspace
    marker = tmp_path / "ran"
    bin_dir = ws / "bin"
    for name in ("mcporter", "node", "sh"):
        planted(bin_dir, name, marker)
    evil = {"mcpServers": {"agent-memory": {"command": str(bin_dir / "node"), "args": []}}}
    (ws / "evil.json").write_text(json.dumps(evil))
    link = tmp_path / "innocent.json"  # outside, but a link into the workspace
    link.symlink_to(ws / "evil.json")
    user_config = ws / "cfg" / "memfuse" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f'transport = "session"\n[session]\ncommand = "{bin_dir / "node"}"\n')
    ours = shlex.join(plan.memfuse_command())
    w = f"-w {world.workspace}"
    jobs = tmp_path / "agent.cron"
    jobs.write_text(
        f"MEMFUSE_MCPORTER_CONFIG={ws}/evil.json\n"
        "AGENT_MEMORY_RERANK_BASE_URL=https://me:hunter2pw@rerank.example.invalid/v1\n"
        f"PATH={bin_dir}:/usr/bin:/bin\n"
        f"SHELL={bin_dir}/sh\n"
        f"0 1 * * * {ours} sync -q {w} --mcporter {bin_dir}/mcporter\n"
        f"0 2 * * * env MEMFUSE_MCPORTER=./bin/mcporter {ours} surface {w}\n"
        f"0 3 * * * XDG_CONFIG_HOME={ws}/cfg {ours} tidy {w} --mcporter-config {link}\n"
        f"0 4 * * * {ours} sync {w} --state-dir {ws}/state --config {ws}/x.toml\n"
        f"0 5 * * * {ours} sync {w} --transport=session\n"
        f"0 6 * * * {ws}/tools/memfuse sync {w}\n"
        f"0 7 * * * {ours} sync {w} --days $(touch {marker}; echo 1) || {bin_dir}/sh\n"
    )
    (ws / "tools").mkdir()
    (ws / "tools" / "memfuse").symlink_to(plan.memfuse_command()[0])  # this memfuse, for now
    out = world.json("cron", "--check", str(jobs))
    assert not marker.exists(), marker.read_text()
    assert out.code == 1
    by_line = {
        job["job"]: " | ".join(job["findings"] + job.get("unchecked", []))
        for job in out.data["jobs"]
    }
    assert all(not job["ok"] for job in out.data["jobs"])
    first = by_line["line 5"]
    assert f"--mcporter {bin_dir}/mcporter, inside the workspace" in first
    assert f"MEMFUSE_MCPORTER_CONFIG={ws}/evil.json, inside the workspace" in first
    assert f"PATH holds {bin_dir}, inside the workspace" in first
    assert f"SHELL={bin_dir}/sh, inside the workspace" in first
    assert "MEMFUSE_MCPORTER=./bin/mcporter" in by_line["line 6"]  # `env NAME=value memfuse`
    assert f"XDG_CONFIG_HOME={ws}/cfg, inside the workspace" in by_line["line 7"]
    assert f"--mcporter-config {link}, inside the workspace" in by_line["line 7"]
    assert f"--state-dir {ws}/state, inside the workspace" in by_line["line 8"]
    assert "--config: not an option of memfuse sync" in by_line["line 8"]
    assert "--transport session" in by_line["line 9"]
    assert f"its program {ws}/tools/memfuse lies inside the workspace" in by_line["line 10"]
    assert "cron's shell expands it" in by_line["line 11"]
    assert "its line goes on past memfuse" in by_line["line 11"]
    assert "AGENT_MEMORY_RERANK_BASE_URL=https://****@" in first  # its password never shown
    assert "hunter2pw" not in out.stdout
    printed = world.run("cron", "--check", str(jobs)).stdout
    assert f"not used: --mcporter {bin_dir}/mcporter, inside the workspace" in printed


def test_check_reports_what_a_unit_or_an_agent_sets_beside_the_command(
    world: World, tmp_path: Path, dry_runs: list[list[str]]
) -> None:
    ours = plan.memfuse_command()
    units = tmp_path / "units"
    units.mkdir()
    (units / "x-sync.service").write_text(
        "[Service]\nType=oneshot\n"
        f"EnvironmentFile={world.workspace}/env\nExecStartPre={world.workspace}/pre.sh\n"
        f'Environment="PYTHONPATH={world.workspace}"\n'
        f"ExecStart={shlex.join([*ours, 'sync', '-w', str(world.workspace)])}\n"
    )
    out = world.json("cron", "--format", "systemd", "--check", str(units))
    found = " | ".join(out.data["jobs"][0]["findings"])
    assert f"sets EnvironmentFile={world.workspace}/env" in found
    assert f"sets ExecStartPre={world.workspace}/pre.sh" in found
    assert "sets PYTHONPATH" in found
    plist = {"Label": "x", "ProgramArguments": [*ours, "tidy", "-w", str(world.workspace)],
             "EnvironmentVariables": {"MEMFUSE_MCPORTER": f"{world.workspace}/m"},
             "StartCalendarInterval": {"Hour": 3, "Minute": 0}}  # fmt: skip
    (tmp_path / "x.plist").write_bytes(plistlib.dumps(plist))
    out = world.json("cron", "--format", "launchd", "--check", str(tmp_path / "x.plist"))
    assert f"MEMFUSE_MCPORTER={world.workspace}/m, inside" in out.data["jobs"][0]["findings"][0]
    assert [subcommand(tuple(argv))[0] for argv in dry_runs] == ["sync", "tidy"]


def test_the_printed_schedule_checks_without_a_finding(world: World) -> None:
    """memfuse's own lines name the operator's own settings: nothing there is a finding."""
    out = world.json("cron", "--check")
    assert [job["findings"] for job in out.data["jobs"]] == [[], [], []]


def test_missed_runs_follow_the_zone_rules_of_each_day(
    world: World, tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: on the day the clocks go back, yesterday's 22:00 was built with today's
    offset (an hour late), and the sync made on time was flagged missed."""
    monkeypatch.setattr(base, "system_zone", lambda: "Europe/Berlin")
    fake_crontab(tools, None)
    assert world.json("cron", "--install", "--now", "2026-10-23T12:00+02:00").code == 0
    record = json.loads((world.state / SCHEDULE_FILE).read_text())
    assert record["zone"] == "Europe/Berlin" and record["installed"].startswith("2026-10-23T12")
    for at in ("2026-10-24T14:00+02:00", "2026-10-24T22:00+02:00"):
        assert world.run("sync", "-q", "--now", at).code == 0
    out = world.json("status", "--now", "2026-10-25T09:00+01:00")
    assert out.data["commands"]["sync"]["missed"] is None
    assert out.data["commands"]["sync"]["missed_runs"] == 0


def test_runs_due_before_the_install_are_never_missed_and_two_missed_are_an_alarm(
    world: World, tools: Path
) -> None:
    """Issue 33: right after `cron --install`, yesterday's times were reported missed; and a
    schedule that stopped kept `status -q` at exit 0 for 33 h after its first missed run."""
    fake_crontab(tools, None)
    assert world.json("cron", "--install", "--now", "2026-12-03T12:00").code == 0
    fresh = world.json("status", "--now", "2026-12-03T13:30")
    assert fresh.code == 0
    assert all(view["missed"] is None for view in fresh.data["commands"].values())
    one = world.json("status", "--now", "2026-12-03T15:30")
    assert one.code == 0 and one.data["commands"]["sync"]["missed_runs"] == 1  # a warning
    two = world.json("status", "--now", "2026-12-03T23:30")
    assert two.code == 4
    assert two.data["commands"]["sync"]["missed_runs"] == 2
    assert any(
        a.startswith("sync needs a person: it missed its last 2") for a in two.data["alarms"]
    )
    assert world.run("status", "-q", "--now", "2026-12-03T23:30").code == 4
    assert (
        "missed its last 2 scheduled runs"
        in world.run("status", "--now", "2026-12-03T23:30").stdout
    )


def test_the_scheduler_zone_is_the_systems_not_the_operators_tz(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")  # cron never sees the operator's TZ
    zones = tmp_path / "usr" / "share" / "zoneinfo" / "Europe"
    zones.mkdir(parents=True)
    (zones / "Berlin").write_bytes(b"TZif")
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "localtime").symlink_to(zones / "Berlin")
    assert base.system_zone(etc / "localtime") == "Europe/Berlin"
    (etc / "localtime").unlink()
    (etc / "localtime").write_bytes(b"TZif")  # a copy, as containers have it
    (etc / "timezone").write_text("America/New_York\n")
    assert base.system_zone(etc / "localtime") == "America/New_York"
    (etc / "timezone").write_text("../../etc/passwd\n")
    assert base.system_zone(etc / "localtime") is None  # the local rules then


def test_status_says_which_schedule_is_installed_where_and_its_next_run(
    world: World, tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40: `status` said nothing about the installed schedule."""
    monkeypatch.setattr(base, "system_zone", lambda: "Europe/Berlin")
    none = world.json("status", "--now", "2026-12-03T12:00+01:00")
    assert none.data["schedule"] == {"installed": False}
    assert "schedule none installed" in world.run("status", "--now", "2026-12-03T12:00").stdout
    fake_crontab(tools, None)
    assert world.json("cron", "--install", "--now", "2026-12-03T12:00+01:00").code == 0
    out = world.json("status", "--now", "2026-12-03T12:00+01:00")
    view = out.data["schedule"]
    assert view["installed"] and view["format"] == "crontab" and "crontab -l" in view["where"]
    assert view["zone"] == "Europe/Berlin"
    assert (view["next_command"], view["next_run"]) == ("sync", "2026-12-03T14:00+01:00")
    assert "MAILTO" in view["alerts"]
    text = world.run("status", "--now", "2026-12-03T12:00+01:00").stdout
    assert "schedule crontab: your crontab" in text and "next: sync at 2026-12-03 14:00" in text
    assert world.json("cron", "--remove").code == 0
    assert world.json("status").data["schedule"] == {"installed": False}


def test_no_crontab_and_no_user_manager_names_the_ways_on(
    world: World, tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40: `crontab is not on this PATH`, rc 1, and nothing said about what to do."""
    monkeypatch.setenv("PATH", str(tools))  # no crontab, no systemctl, no openclaw
    out = world.json("cron", "--install")
    assert out.code == 1
    error = out.data["error"]
    assert error.startswith("crontab is not on this PATH. Ways on from here: ")
    assert "install cron (Debian/Ubuntu: `apt-get install cron`" in error
    assert "`memfuse cron --format systemd --install`" in error  # with a user manager
    assert "install OpenClaw" in error
    assert "`memfuse cron --format F` prints the schedule" in error
    tool(tools, "openclaw", "exit 0")  # OpenClaw is here: its scheduler is the way on
    here = world.json("cron", "--install").data["error"]
    assert "`memfuse cron --format openclaw --install` (OpenClaw's own cron jobs: on this" in here
    assert "install OpenClaw" not in here


def test_check_of_a_file_takes_the_workspace_from_the_file(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dry_runs: list[list[str]]
) -> None:
    """Issue 40: `cron --check FILE` without -w exited 66 (the default workspace is absent)
    though every job in the file names its workspace."""
    printed = world.json("cron").data["text"]
    table = tmp_path / "memfuse.cron"
    table.write_text(printed + "\n")
    monkeypatch.delenv("MEMFUSE_WORKSPACE", raising=False)
    from typer.testing import CliRunner

    from memfuse.cli import app

    done = CliRunner().invoke(
        app, ["cron", "--check", str(table), "--json"], catch_exceptions=False, obj=world.seams
    )
    assert done.exit_code != 66, done.stdout
    data = json.loads(done.stdout)["data"]
    assert data["source"] == str(table)
    assert [job["findings"] for job in data["jobs"]] == [[], [], []]
    assert all(str(world.workspace) in job["command"] for job in data["jobs"])
    assert len(dry_runs) == 3 and all(str(world.workspace) in argv for argv in dry_runs)


def jobs_naming(world: World, tmp_path: Path, config: Path) -> Path:
    """A crontab of two memfuse jobs naming this mcporter config: by flag, then by env."""
    ours = shlex.join(plan.memfuse_command())
    jobs = tmp_path / "mine.cron"
    jobs.write_text(
        f"0 1 * * * {ours} sync -q -w {world.workspace} --mcporter-config {config}\n"
        f"0 2 * * * MCPORTER_CONFIG={config} {ours} surface -q -w {world.workspace}\n"
    )
    return jobs


def test_a_job_naming_its_own_store_setup_is_said_not_tried_not_failed(
    world: World, tmp_path: Path
) -> None:
    """Issue 47: a line naming a mcporter config other than the operator's was tried with
    the operator's own and reported "would fail" though it runs as written. It is now not
    tried, says why and how to try it, and exits 5 (neither a pass nor a failure)."""
    other = tmp_path / "elsewhere" / "mcporter.json"
    other.parent.mkdir()
    other.write_text('{"mcpServers": {}}')
    jobs = jobs_naming(world, tmp_path, other)
    out = world.json("cron", "--check", str(jobs))
    assert out.code == 5, out.stdout
    assert [job["ok"] for job in out.data["jobs"]] == [True, True]
    first, second = (" | ".join(job["unchecked"]) for job in out.data["jobs"])
    assert f"--mcporter-config {other}: not this memfuse's own" in first
    assert f"memfuse cron --format crontab --check {jobs} --mcporter-config {other}`" in first
    assert f"`MCPORTER_CONFIG={other} memfuse cron --format crontab --check {jobs}`" in second
    assert "would fail" not in out.stdout
    assert "not tried" in out.data["error"]
    printed = world.run("cron", "--check", str(jobs))
    assert "line 1: NOT CHECKED" in printed.stdout
    assert "would fail" not in printed.stdout + printed.stderr


def test_a_job_naming_a_config_that_is_not_there_would_fail_not_unchecked(
    world: World, tmp_path: Path
) -> None:
    """Review of issues 47 and 50: a line naming a mcporter config that does not exist (the
    issue's own `mcporter.jsn` typo) fails at every run (exit 78), but was said "NOT CHECKED"
    (exit 5, ok) as if it might run as written: the check hid a failure. It would fail."""
    typo = tmp_path / "elsewhere" / "mcporter.jsn"
    jobs = jobs_naming(world, tmp_path, typo)
    out = world.json("cron", "--check", str(jobs))
    assert out.code == 1, out.stdout
    assert [job["ok"] for job in out.data["jobs"]] == [False, False]
    first, second = (" | ".join(job["findings"]) for job in out.data["jobs"])
    assert f"--mcporter-config {typo}: no such file, so the job fails as written" in first
    assert f"MCPORTER_CONFIG {typo}: no such file" in second
    assert all(not job.get("unchecked") for job in out.data["jobs"])
