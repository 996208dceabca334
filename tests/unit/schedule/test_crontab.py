"""The crontab block: what cron runs, and an install that never changes the user's lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memfuse.schedule import ParseError, ScheduleError, crontab
from tests.unit.schedule.samples import argv_printer, hostile_schedule, memfuse_schedule

USER_CRONTAB = (
    "# my jobs\r\n"  # edited on Windows once: the \r is the user's business
    "MAILTO=me@example.org\n"
    "*/10 * * * * /usr/bin/backup --to 'nas:/b' 2>&1 | logger\n"
    "\n"
    "# >>> memfuse memfuse-other >>>\n"
    "0 1 * * * /other/memfuse tidy\n"
    "# <<< memfuse memfuse-other <<<\n"
    "@reboot /usr/bin/ünïcode   \n"
    "30 6 * * 1-5 echo week%day% stdin"  # no newline at the end
)


def test_the_block_is_marked_and_carries_env_comments_and_one_line_per_job() -> None:
    block = crontab.render(memfuse_schedule())
    lines = block.split("\n")
    assert lines[0] == "# >>> memfuse memfuse-ab12cd34 >>>"
    assert lines[-2:] == ["# <<< memfuse memfuse-ab12cd34 <<<", ""]
    assert "SHELL=/bin/sh" in lines
    assert "PATH=/home/u/.local/bin:/usr/local/bin:/usr/bin:/bin" in lines
    assert "# note: node was not found on this PATH: mcporter needs it" in lines
    assert "# 14:05 and 22:05: RECENT.md for the next sessions" in lines
    assert (
        "0 14,22 * * * /home/u/.local/bin/memfuse sync -q --wait 300 --workspace"
        " /home/u/.openclaw/workspace --mcporter /usr/bin/mcporter"
    ) in lines
    assert [line.split(" /")[0] for line in lines if "/memfuse " in line] == [
        "0 14,22 * * *", "5 14,22 * * *", "0 3 * * *",
    ]  # fmt: skip


def test_cron_then_sh_hand_the_program_exactly_its_argv(tmp_path: Path) -> None:
    """Through cron's `%` handling (parse) and a real sh, every hostile argument arrives whole."""
    schedule = hostile_schedule(argv_printer(tmp_path))
    (job, _tidy) = crontab.parse(crontab.render(schedule))
    done = subprocess.run(["/bin/sh", "-c", job.command], capture_output=True, check=True)
    assert tuple(done.stdout.decode().split("\0")[:-1]) == schedule.runs[0].argv


def test_a_percent_sign_never_reaches_cron_unescaped() -> None:
    block = crontab.render(hostile_schedule())
    for line in block.split("\n"):
        if line.startswith("0 ") or line.startswith("30 "):
            assert crontab.cron_command(line) == line.replace("\\%", "%")  # nothing cut off


def test_env_values_are_quoted_only_when_cron_would_change_them() -> None:
    assert crontab.env_line("PATH", "/opt/my tools/bin") == "PATH=/opt/my tools/bin"
    assert crontab.env_line("X", " padded ") == 'X=" padded "'
    assert crontab.env_line("X", '"quoted"') == "X='\"quoted\"'"
    assert crontab.env_line("X", "") == 'X=""'
    with pytest.raises(ScheduleError, match="both kinds of quote"):
        crontab.env_line("X", " 'both\" ")


# --- merge -------------------------------------------------------------------------------------


def test_merge_appends_and_keeps_every_user_line_byte_for_byte() -> None:
    block = crontab.render(memfuse_schedule())
    merged = crontab.merge(USER_CRONTAB, block)
    assert merged == USER_CRONTAB + "\n" + block


def test_merge_replaces_only_its_own_block_in_place() -> None:
    old = crontab.render(memfuse_schedule(workspace="/old"))
    new = crontab.render(memfuse_schedule(workspace="/new"))
    head, tail = "# above\r\nMAILTO=x\n", "# below\n0 5 * * * /bin/true"
    merged = crontab.merge(head + old + tail, new)
    assert merged == head + new + tail
    assert "/old" not in merged


def test_merge_leaves_another_labels_block_alone() -> None:
    ours = crontab.render(memfuse_schedule())
    merged = crontab.merge(USER_CRONTAB, ours)
    assert "# >>> memfuse memfuse-other >>>\n0 1 * * * /other/memfuse tidy\n" in merged
    assert crontab.merge(merged, ours) == merged


def test_merge_twice_is_merge_once() -> None:
    block = crontab.render(memfuse_schedule())
    for existing in ("", "\n", USER_CRONTAB, USER_CRONTAB + "\n"):
        once = crontab.merge(existing, block)
        assert crontab.merge(once, block) == once


def test_merge_into_an_empty_crontab_is_the_block() -> None:
    block = crontab.render(memfuse_schedule())
    assert crontab.merge("", block) == block


def test_an_end_marker_on_the_last_line_gets_its_newline_back() -> None:
    block = crontab.render(memfuse_schedule())
    assert crontab.merge("# mine\n" + block.rstrip("\n"), block) == "# mine\n" + block


@pytest.mark.parametrize(
    "broken",
    [
        "# >>> memfuse memfuse-ab12cd34 >>>\n0 3 * * * /x\n",  # no end
        "# <<< memfuse memfuse-ab12cd34 <<<\n# >>> memfuse memfuse-ab12cd34 >>>\n",
        "# <<< memfuse memfuse-ab12cd34 <<<\n",
    ],
)
def test_merge_refuses_to_guess_at_broken_markers(broken: str) -> None:
    with pytest.raises(ScheduleError, match="markers"):
        crontab.merge("# mine\n" + broken + "# also mine\n", crontab.render(memfuse_schedule()))


def test_two_blocks_of_one_label_are_refused() -> None:
    block = crontab.render(memfuse_schedule())
    with pytest.raises(ScheduleError, match="markers"):
        crontab.merge(block + block, block)


def test_remove_takes_out_the_block_and_nothing_else() -> None:
    block = crontab.render(memfuse_schedule())
    assert crontab.remove(crontab.merge(USER_CRONTAB + "\n", block), "memfuse-ab12cd34") == (
        USER_CRONTAB + "\n"
    )
    assert crontab.remove(USER_CRONTAB, "memfuse-ab12cd34") == USER_CRONTAB


def test_merge_wants_a_whole_block() -> None:
    with pytest.raises(ScheduleError):
        crontab.merge("", "0 3 * * * /x\n")


# --- reading a crontab -------------------------------------------------------------------------


def test_parse_reads_a_hand_written_crontab_as_cron_would() -> None:
    jobs = crontab.parse(USER_CRONTAB)
    backup, other, reboot, weekday = jobs
    assert backup.argv == ("/usr/bin/backup", "--to", "nas:/b")  # `2>&1 | logger` is not argv
    assert dict(backup.env) == {"MAILTO": "me@example.org"}
    assert backup.times == tuple((h, m) for h in range(24) for m in range(0, 60, 10))
    assert other.times == ((1, 0),)
    assert reboot.argv == ("/usr/bin/ünïcode",) and reboot.times == ()
    assert weekday.argv == ("echo", "week") and weekday.times == ()  # `%` starts stdin


def test_parse_takes_leading_assignments_into_the_jobs_environment() -> None:
    (job,) = crontab.parse("PATH=/bin\n0 3 * * * LANG=C 'X=1' /x/memfuse tidy\n")
    assert job.argv == ("X=1", "/x/memfuse", "tidy")  # a quoted assignment is a command word
    assert dict(job.env) == {"PATH": "/bin", "LANG": "C"}


def test_parse_reads_quoted_env_values_as_cron_does() -> None:
    (job,) = crontab.parse("A = ' x '\nB=\"it's\"   \nC= bare value  \n@daily /bin/true\n")
    assert dict(job.env) == {"A": " x ", "B": "it's", "C": "bare value"}
    assert job.times == ((0, 0),)


@pytest.mark.parametrize("line", ["0 3 * * /x", "0 3 * * * /x 'unclosed", "0 3 * * * >/dev/null"])
def test_parse_refuses_what_cron_could_not_run_as_one_command(line: str) -> None:
    with pytest.raises(ParseError):
        crontab.parse(line + "\n")


def test_daily_times_reads_lists_ranges_and_steps() -> None:
    assert crontab.daily_times("0,30", "1-2") == ((1, 0), (1, 30), (2, 0), (2, 30))
    assert crontab.daily_times("5", "*/12") == ((0, 5), (12, 5))
    assert crontab.daily_times("0", "3", "*", "*", "1") == ()  # weekdays only: not daily
    assert crontab.daily_times("61", "3") == ()
