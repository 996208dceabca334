"""systemd user timers: units systemd accepts, that run exactly the argv they were given."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from memfuse.schedule import ParseError, ScheduleError, systemd
from tests.conftest import UNREACHED
from tests.unit.schedule.samples import argv_printer, hostile_schedule, memfuse_schedule

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


def test_each_run_gets_a_oneshot_service_and_a_persistent_timer() -> None:
    files = systemd.render(memfuse_schedule())
    assert sorted(files) == [
        f"memfuse-ab12cd34-{run}.{kind}"
        for run in ("surface", "sync", "tidy")
        for kind in ("service", "timer")
    ]
    service = files["memfuse-ab12cd34-sync.service"].split("\n")
    assert "Type=oneshot" in service
    assert 'Environment="PATH=/home/u/.local/bin:/usr/local/bin:/usr/bin:/bin"' in service
    assert any(
        line.startswith("Description=memfuse sync (memfuse-ab12cd34): 14:00") for line in service
    )
    timer = files["memfuse-ab12cd34-sync.timer"].split("\n")
    assert [line for line in timer if line.startswith("OnCalendar=")] == [
        "OnCalendar=*-*-* 14:00:00", "OnCalendar=*-*-* 22:00:00",
    ]  # fmt: skip
    for line in ("Persistent=true", "Unit=memfuse-ab12cd34-sync.service", "WantedBy=timers.target"):
        assert line in timer


def test_specifiers_and_dollars_are_doubled_and_words_quoted() -> None:
    line = systemd.exec_line(("/usr/bin/memfuse", "100%", "$HOME", "a b", 'q"\\', "\t", "-x"))
    assert line == '/usr/bin/memfuse "100%%" "$$HOME" "a b" "q\\"\\\\" "\\x09" -x'
    assert systemd.environment_word("X", '50% $HOME "q"') == '"X=50%% $HOME \\"q\\""'


def test_a_program_path_with_a_space_is_quoted_but_its_dollar_is_not_doubled() -> None:
    """systemd runs the path as written (after specifiers): it is never variable-expanded."""
    assert systemd.exec_program("/home/my $dir/100%/memfuse") == '"/home/my $dir/100%%/memfuse"'


@pytest.mark.parametrize(
    "path", ['/home/a"b/memfuse', "/home/a'b/memfuse", "/home/a\\b/memfuse", "/a\x1bb"]
)
def test_a_program_path_systemd_would_refuse_is_refused_first(path: str) -> None:
    schedule = hostile_schedule(path)
    with pytest.raises(ScheduleError, match="systemd cannot run"):
        systemd.render(schedule)


def test_only_memfuses_own_units_are_recognised_as_generated() -> None:
    files = systemd.render(memfuse_schedule())
    assert all(systemd.is_generated(text, "memfuse-ab12cd34") for text in files.values())
    assert not systemd.is_generated(files["memfuse-ab12cd34-sync.timer"], "memfuse-other")
    assert not systemd.is_generated("[Unit]\nDescription=mine\n", "memfuse-ab12cd34")


def test_parse_joins_continued_lines_and_honours_resets() -> None:
    unit = (
        "[Service]\n"
        "ExecStart=/bin/false\n"
        "ExecStart=\n"
        "ExecStart=/bin/echo 'one two' \\\n"
        '    three \\; "%%"\n'
        "Environment=A=1 'B=2 3'\n"
        "Environment=\n"
        "Environment=C=4\n"
    )
    timer = "[Timer]\nOnCalendar=daily\nUnit=x.service\n"
    (job,) = systemd.parse({"x.service": unit, "y.timer": timer})
    assert job.argv == ("/bin/echo", "one two", "three", ";", "%")
    assert job.env == (("C", "4"),)
    assert job.times == ((0, 0),)


@pytest.mark.parametrize(
    ("exec_start", "problem"),
    [
        ("/bin/echo $HOME", "environment variables"),
        ("/bin/echo ${HOME}", "environment variables"),
        ("/bin/echo %h", "specifier"),
        ("/bin/echo a ; /bin/echo b", "several command lines"),
        ("/bin/echo '\\q'", "unknown escape"),
        ("/bin/echo 'open", "unterminated"),
        ("@/bin/echo name", "prefix"),
        ("echo hi", "absolute"),
    ],
)
def test_parse_refuses_what_it_cannot_reproduce(exec_start: str, problem: str) -> None:
    with pytest.raises(ParseError, match=problem):
        systemd.parse({"x.service": f"[Service]\nExecStart={exec_start}\n"})


def test_a_calendar_that_is_not_daily_times_reads_as_no_times() -> None:
    timer = "[Timer]\nOnCalendar=Mon *-*-* 03:00:00\n"
    (job,) = systemd.parse({"x.service": "[Service]\nExecStart=/bin/true\n", "x.timer": timer})
    assert job.times == () and job.when == "Mon *-*-* 03:00:00"


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_verify_accepts_the_units(tmp_path: Path) -> None:
    """systemd's own parser finds no error or warning in hostile units (their program is a
    real executable: verify checks that it exists)."""
    files = systemd.render(hostile_schedule(argv_printer(tmp_path)))
    units = tmp_path / "units"
    units.mkdir()
    for name, text in files.items():
        (units / name).write_text(text)
    done = subprocess.run(
        [str(SYSTEMD_ANALYZE), "verify", "--man=no", *sorted(map(str, units.iterdir()))],
        capture_output=True,
        text=True,
        check=False,
        timeout=UNREACHED,
    )
    assert done.returncode == 0, done.stderr
    assert str(units) not in done.stderr, done.stderr  # no warning about our files
