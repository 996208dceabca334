"""A schedule is checked where it is built, so no renderer sees a value it cannot write."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from memfuse.schedule import Run, Schedule, ScheduleError
from tests.unit.schedule.samples import MEMFUSE, memfuse_schedule

SRC = Path(__file__).resolve().parents[3] / "src" / "memfuse" / "schedule"


def run(argv: tuple[str, ...] = (MEMFUSE, "sync"), times: object = ((3, 0),)) -> Run:
    return Run("sync", argv, times, "comment")  # type: ignore[arg-type]


def schedule(**changes: object) -> Schedule:
    fields: dict[str, object] = {
        "runs": (run(),),
        "env": (("PATH", "/usr/bin"),),
        "label": "memfuse-ab12",
    }
    fields.update(changes)
    return Schedule(**fields)  # type: ignore[arg-type]


def test_times_are_kept_sorted_and_without_repeats() -> None:
    assert run(times=[(22, 0), (14, 0), (22, 0)]).times == ((14, 0), (22, 0))


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "a\0b"])
def test_a_line_break_or_nul_in_an_argument_is_refused(bad: str) -> None:
    with pytest.raises(ScheduleError, match="contains"):
        run((MEMFUSE, "sync", "--workspace", bad))


@pytest.mark.parametrize("bad", ["a\nb", "a\0b"])
def test_a_line_break_or_nul_in_the_environment_is_refused(bad: str) -> None:
    with pytest.raises(ScheduleError, match="PATH"):
        schedule(env=(("PATH", bad),))


def test_a_string_that_is_not_utf8_is_refused() -> None:
    undecodable = b"/w/\xff".decode("utf-8", "surrogateescape")
    with pytest.raises(ScheduleError, match="UTF-8"):
        run((MEMFUSE, "--workspace", undecodable))


@pytest.mark.parametrize("program", ["memfuse", "./memfuse", "bin/memfuse", "~/bin/memfuse", ""])
def test_the_program_must_be_an_absolute_path(program: str) -> None:
    with pytest.raises(ScheduleError, match="absolute"):
        run((program, "sync"))


@pytest.mark.parametrize(
    "program", ["/usr//bin/memfuse", "/usr/./bin/memfuse", "/a/../memfuse", "/a/"]
)
def test_the_program_path_must_be_normalised(program: str) -> None:
    with pytest.raises(ScheduleError, match="normalised"):
        run((program, "sync"))


def test_an_empty_argv_is_refused() -> None:
    with pytest.raises(ScheduleError, match="empty argv"):
        run(())


@pytest.mark.parametrize(
    "times", [(), ((24, 0),), ((3, 60),), ((-1, 0),), ((3,),), ((True, 0),), ((3.0, 0),)]
)
def test_times_must_be_hours_and_minutes_of_a_day(times: object) -> None:
    with pytest.raises(ScheduleError):
        run(times=times)


@pytest.mark.parametrize(
    "label", ["Memfuse", "memfuse_x", "-memfuse", "memfuse-", "a--b", "a/b", "a b", "", "x" * 65]
)
def test_the_label_must_be_a_short_slug(label: str) -> None:
    with pytest.raises(ScheduleError, match="label"):
        schedule(label=label)


@pytest.mark.parametrize(
    "env", [(("1PATH", "x"),), (("PA TH", "x"),), (("PATH=", "x"),), (("PATH", "a"), ("PATH", "b"))]
)
def test_environment_names_are_valid_and_set_once(env: tuple[tuple[str, str], ...]) -> None:
    with pytest.raises(ScheduleError):
        schedule(env=env)


def test_two_runs_cannot_share_a_name() -> None:
    with pytest.raises(ScheduleError, match="repeat"):
        schedule(runs=(run(), run()))


def test_every_run_gets_the_label_as_prefix() -> None:
    s = memfuse_schedule()
    assert [s.unit_name(r) for r in s.runs] == [
        "memfuse-ab12cd34-sync", "memfuse-ab12cd34-surface", "memfuse-ab12cd34-tidy",
    ]  # fmt: skip


# The schedule's description and the text of the formats: pure, on the stdlib alone. The
# schedulers' install and the engines (install, check, trial) use memfuse's services.
PURE = ("runs.py", "cronexpr.py", "shwords.py", "writers.py")


def test_the_description_and_its_formats_import_nothing_else_of_memfuse() -> None:
    """The schedule's own modules stand alone, on the stdlib and memfuse's errors (its
    ScheduleError is one of them, so a run reports it as one line)."""
    for path in sorted(SRC / name for name in PURE):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""] if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names] if isinstance(node, ast.Import) else []
            )  # fmt: skip
            for name in names:
                top = name.split(".")[0]
                ours = name in ("memfuse.schedule.runs", "memfuse.errors")
                assert ours or top in sys.stdlib_module_names or top == "__future__", (
                    f"{path.name} imports {name}"
                )


def test_due_moments_take_each_days_own_offset_and_the_gap() -> None:
    from datetime import datetime, time
    from zoneinfo import ZoneInfo

    from memfuse.schedule.runs import due_between

    berlin = ZoneInfo("Europe/Berlin")
    autumn = due_between(
        (time(22, 0),), berlin, datetime(2026, 10, 24, 12, tzinfo=berlin),
        datetime(2026, 10, 25, 23, tzinfo=berlin),
    )  # fmt: skip
    assert [d.isoformat() for d in autumn] == [
        "2026-10-24T22:00:00+02:00",
        "2026-10-25T22:00:00+01:00",
    ]
    spring = due_between(
        (time(2, 30),), berlin, datetime(2026, 3, 29, 0, tzinfo=berlin),
        datetime(2026, 3, 29, 12, tzinfo=berlin),
    )  # fmt: skip
    assert [d.isoformat() for d in spring] == ["2026-03-29T03:30:00+02:00"]  # after the gap
