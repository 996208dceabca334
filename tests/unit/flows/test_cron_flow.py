"""`memfuse cron`: the crontab it prints, how --check reads one, and the docs that must agree."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from memfuse.commands import cron
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


def example_crontab(**options: bool) -> str:
    built = cron.build(
        EXAMPLE, memfuse=[str(HOME / ".local/bin/memfuse")], which=FOUND.get, **options
    )
    return built.render()


def test_the_crontab_names_everything_absolutely_and_redirects_nothing() -> None:
    text = example_crontab()
    jobs = [line for line in text.splitlines() if re.match(r"^[0-9]", line)]
    assert [line.split()[6] for line in jobs] == ["sync", "surface", "tidy"]
    assert [" ".join(line.split()[:5]) for line in jobs] == [
        "0 14,22 * * *", "5 14,22 * * *", "0 3 * * *",
    ]  # fmt: skip
    for line in jobs:
        assert line.split()[5] == "/home/agent/.local/bin/memfuse"
        assert " -q" in line
        assert "--workspace /home/agent/.openclaw/workspace" in line
        assert f"--mcporter {FOUND['mcporter']}" in line
        assert "--mcporter-config /home/agent/.mcporter/mcporter.json" in line
        assert ">" not in line and "2>&1" not in line and "||" not in line
        assert "--archive" not in line
    path = re.search(r"^PATH=(.*)$", text, re.M)
    assert path is not None
    assert path.group(1).split(":")[:3] == [
        "/usr/bin", "/home/agent/.local/share/mcporter/node_modules/.bin", "/home/agent/.local/bin",
    ]  # fmt: skip
    assert "--archive" in example_crontab(archive=True).splitlines()[-1]


def test_a_percent_sign_is_escaped_and_read_back() -> None:
    settings = Settings(workspace=Path("/srv/100%/ws"), now=EXAMPLE.now)
    text = cron.build(settings, memfuse=["/opt/memfuse"], which=FOUND.get).render()
    assert "/srv/100\\%/ws" in text
    commands = [c for _n, _l, _e, c in cron.parse(text)]
    assert all("--workspace /srv/100%/ws" in c for c in commands)


def test_check_skips_lines_that_are_not_memfuse_jobs_and_reads_assignments() -> None:
    text = (
        'PATH = "/opt/bin:/usr/bin"\n'
        "MAILTO=ops@example.invalid\n"
        "0 1 * * * /usr/bin/backup --all\n"
        "@daily MEMFUSE_WORKSPACE=/w memfuse tidy -q\n"
        "0 14 * * * memfuse sync -q >> /w/.memfuse/cron.log 2>&1 || echo failed\n"
    )
    jobs = cron.parse(text)
    assert [n for n, *_ in jobs] == [3, 4, 5]
    assert jobs[0][2] == {"PATH": "/opt/bin:/usr/bin", "MAILTO": "ops@example.invalid"}
    argv, assigned, sub = cron._memfuse_argv(jobs[1][3])
    assert (argv, assigned, sub) == (["memfuse", "tidy", "-q"], {"MEMFUSE_WORKSPACE": "/w"}, "tidy")
    argv, _assigned, sub = cron._memfuse_argv(jobs[2][3])
    assert argv == ["memfuse", "sync", "-q"] and sub == "sync"  # the shell part is not run
    assert cron._memfuse_argv("/usr/bin/backup --all")[2] is None
    assert cron._memfuse_argv("/usr/bin/python3 -m memfuse sync -q")[2] == "sync"
    assert cron._memfuse_argv("/bin/rm -m memfuse sync")[2] is None  # only python -m memfuse


def test_check_flags_stderr_sent_away_from_cron_mail(world: World, tmp_path: Path) -> None:
    crontab = tmp_path / "old.cron"
    crontab.write_text(
        "PATH=/nonexistent\n0 14 * * * memfuse sync -q >> /w/cron.log 2>&1 || echo failed\n"
    )
    out = world.run("cron", "--check", str(crontab))
    assert out.code == 1
    assert "line 2: FAIL" in out.stdout
    assert "stderr is redirected away from cron's mail" in out.stdout
    assert "memfuse is not on this crontab's PATH (/nonexistent)" in out.stdout


def test_cron_prints_the_crontab_even_under_quiet(world: World) -> None:
    out = world.run("cron", "-q", "--archive")
    assert out.code == 0
    assert f"--workspace {world.workspace}" in out.stdout
    assert "tidy -q --archive" in out.stdout


def test_the_example_crontab_is_what_memfuse_cron_prints() -> None:
    example = (ROOT / "examples" / "crontab.txt").read_text()
    assert example == example_crontab()


def test_the_docs_show_the_same_schedule_and_flags_as_memfuse_cron() -> None:
    jobs = [line for line in example_crontab().splitlines() if re.match(r"^[0-9]", line)]
    operations = (ROOT / "docs" / "operations.md").read_text()
    for line in jobs:
        fields = line.split()
        schedule = " ".join(fields[:5])
        flags = " ".join(fields[6 : fields.index("--workspace")])
        assert f"| `{schedule}` | `memfuse {flags}` |" in operations, (schedule, flags)
