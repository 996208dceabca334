"""`memfuse serve`'s tools, in-process: the same answers as the commands, bounded arguments
and answers, a journal changed between calls, and a store that goes away and comes back."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memfuse.commands import serve
from memfuse.config import load_settings
from memfuse.ledger.reader import LedgerReader
from memfuse.recall.index import RecallIndex
from memfuse.report import Reporter, SecretMasker
from memfuse.run.context import RunContext
from memfuse.run.mcp_server import ToolAnswer, UnknownTool
from memfuse.serve import answers
from tests.fakes import World, digest, state_of

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
JOURNAL = (
    "## 09:30\n- Met Bob about the billing migration cutover plan\n"
    "- Remember: Alice prefers dark mode in every editor\n"
    "## 14:00\n- 今天讨论了 billing 迁移的回滚步骤\n"
)
SECRET = "sk-serve-secret-0123456789"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def service(world: World, clock: Clock | None = None, secrets: tuple[str, ...] = ()) -> Any:
    settings = load_settings({"workspace": str(world.workspace), "now": NOW})
    reporter = Reporter()
    reporter.begin(SecretMasker(secrets), logging.getLogger("memfuse.test"))
    seams = world.seams
    ctx = RunContext(settings, reporter, seams=seams)
    return serve.service(ctx, pinned_now=True, clock=clock or Clock(), retry_after=30.0)


def synced(world: World) -> None:
    world.journal(DAY, JOURNAL)
    (world.workspace / "MEMORY.md").write_text("# MEMORY\n- Billing must finish by December\n")
    assert world.run("sync", "--now", NOW).code == 0


def ok(answer: ToolAnswer) -> dict[str, Any]:
    assert not answer.error, answer.text
    assert answer.data is not None
    assert not answer.text.startswith("{")  # a summary for a model, not the envelope again
    return answer.data


def test_recall_answers_what_the_command_answers(world: World) -> None:
    synced(world)
    cli = world.json("recall", "billing migration", "--now", NOW, "--limit", "5").data
    envelope = ok(service(world).call("recall", {"query": "billing migration", "limit": 5}))
    assert envelope["command"] == "recall" and envelope["status"] == "ok"
    assert envelope["data"] == cli
    assert envelope["data"]["sources"] == ["agent-memory", "journals"]
    assert envelope["warnings"] == []


def test_where_and_status_answer_what_the_commands_answer(world: World) -> None:
    synced(world)
    served = service(world)
    where = ok(served.call("where", {"what": "dark mode"}))
    assert where["data"] == world.json("where", "dark mode").data
    assert where["data"]["bullets"][0]["in_store"] is True
    status = ok(served.call("status", {}))
    expected = world.json("status", "--now", NOW).data
    assert status["data"]["ledger"] == expected["ledger"]
    assert status["data"]["commands"].keys() == expected["commands"].keys()


def test_a_journal_changed_between_calls_is_found_by_the_next(world: World) -> None:
    synced(world)
    served = service(world)
    before = ok(served.call("recall", {"query": "zeppelin hangar"}))
    assert not [r for r in before["data"]["results"] if "zeppelin" in r["content"]]
    with (world.workspace / "memory" / f"{DAY}.md").open("a") as fh:
        fh.write("- Visited the zeppelin hangar in Friedrichshafen\n")
    after = ok(served.call("recall", {"query": "zeppelin hangar"}))
    top = after["data"]["results"][0]
    assert top["content"].startswith("Visited the zeppelin hangar")
    assert top["location"] == f"memory/{DAY}.md:6"


def test_a_same_size_edit_with_its_old_time_put_back_is_found_by_the_next_call(
    world: World,
) -> None:
    synced(world)
    path = world.workspace / "memory" / f"{DAY}.md"
    path.write_text(path.read_text() + "- Visited the zeppelin hangar in Friedrichshafen\n")
    served = service(world)
    assert ok(served.call("recall", {"query": "zeppelin"}))["data"]["results"]
    before = path.stat()
    path.write_text(path.read_text().replace("zeppelin hangar", "blimp hangars  "))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `rsync -t` leaves it
    assert path.stat().st_size == before.st_size
    after = ok(served.call("recall", {"query": "blimp hangars"}))["data"]["results"]
    assert after and after[0]["content"].startswith("Visited the blimp hangars")


def test_the_store_going_away_costs_one_warning_then_rest_then_a_new_session(
    world: World,
) -> None:
    synced(world)
    clock = Clock()
    served = service(world, clock)
    world.gateway.down = "failed"
    first = ok(served.call("recall", {"query": "dark mode"}))
    assert first["data"]["sources"] == ["journals"]
    assert first["data"]["results"][0]["content"].startswith("Remember: Alice prefers dark")
    assert len(first["warnings"]) == 1 and "store did not answer" in first["warnings"][0]
    assert first["status"] == "degraded"

    asked = len(world.gateway.calls)
    resting = ok(served.call("recall", {"query": "dark mode"}))
    assert len(world.gateway.calls) == asked  # not asked while it rests
    assert resting["data"]["sources"] == ["journals"]
    assert len(resting["warnings"]) == 1 and "asked again in" in resting["warnings"][0]

    world.gateway.down = None
    clock.now += 31
    back = ok(served.call("recall", {"query": "dark mode"}))
    assert back["data"]["sources"] == ["agent-memory", "journals"]
    assert back["warnings"] == [] and back["status"] == "ok"
    assert world.gateway.closed >= 1  # the session that failed was closed, a new one opened


def test_where_says_once_that_the_store_did_not_answer(world: World) -> None:
    synced(world)
    world.gateway.down = "timeout"
    where = ok(service(world).call("where", {"what": "billing"}))
    assert where["data"]["matches"] == 2
    assert [b["in_store"] for b in where["data"]["bullets"]] == [None, None]  # not "gone"
    assert len(where["warnings"]) == 1 and "store did not answer" in where["warnings"][0]


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("recall", {}, "query must be a non-empty string"),
        ("recall", {"query": "   "}, "query must be a non-empty string"),
        ("recall", {"query": 42}, "query must be a non-empty string"),
        ("recall", {"query": "x" * 2001}, "longer than 2000"),
        ("recall", {"query": "x", "limit": 0}, "limit must be a whole number from 1 to 50"),
        ("recall", {"query": "x", "limit": 51}, "from 1 to 50"),
        ("recall", {"query": "x", "limit": True}, "from 1 to 50"),
        ("recall", {"query": "x", "limit": "10"}, "from 1 to 50"),
        ("recall", {"query": "x", "days": 0}, "days must be"),
        ("recall", {"query": "x", "since": "yesterday"}, "since must be a date as YYYY-MM-DD"),
        ("recall", {"query": "x", "since": "2026-02-30"}, "not a day of the calendar"),
        ("recall", {"query": "x", "since": "2026-03-02", "until": "2026-03-01"}, "is after"),
        ("recall", {"query": "x", "types": ["gossip"]}, "types must be a list of"),
        ("recall", {"query": "x", "types": "event"}, "types must be a list of"),
        ("recall", {"query": "x", "types": [["event"]]}, "types must be a list of"),  # no crash
        # falsy values of another type were read as "no types": every type, silently
        ("recall", {"query": "x", "types": ""}, "types must be a list of"),
        ("recall", {"query": "x", "types": 0}, "types must be a list of"),
        ("recall", {"query": "x", "types": False}, "types must be a list of"),
        ("recall", {"query": "x", "types": {}}, "types must be a list of"),
        ("recall", {"query": "x", "limit": float("nan")}, "from 1 to 50"),
        ("recall", {"query": "x", "limit": float("inf")}, "from 1 to 50"),
        ("recall", {"query": "x", "limit": 1e308}, "from 1 to 50"),
        ("recall", {"query": "x", "limit": 5.5}, "from 1 to 50"),
        ("recall", {"query": "x", "verbose": True}, "no argument 'verbose'"),
        ("where", {}, "what must be a non-empty string"),
        ("where", {"what": ["a"]}, "what must be a non-empty string"),
        ("status", {"now": "x"}, "no argument 'now'"),
    ],
)
def test_a_malformed_call_is_an_error_the_caller_can_correct(
    world: World, tool: str, arguments: dict[str, Any], says: str
) -> None:
    world.journal(DAY, JOURNAL)
    answer = service(world).call(tool, arguments)
    assert answer.error and says in answer.text
    assert answer.text.startswith(f"{tool}: ")
    assert not world.gateway.calls  # refused before anything was asked


def test_an_unknown_tool_is_a_protocol_error(world: World) -> None:
    with pytest.raises(UnknownTool):
        service(world).call("forget", {"id": "1"})


def test_a_date_range_keeps_what_is_inside_it(world: World) -> None:
    world.journal("2026-11-20", "## 09:00\n- Billing review with finance, first round\n")
    world.journal("2026-11-27", "## 09:00\n- Billing review with finance, second round\n")
    served = service(world)
    args = {"query": "billing review finance", "since": "2026-11-25", "until": "2026-11-28"}
    got = ok(served.call("recall", args))["data"]["results"]
    assert [r["date"] for r in got] == ["2026-11-27"]
    cli = world.json("recall", "billing review finance", "--since", "2026-11-25", "--until",
                     "2026-11-28", "--now", NOW).data["results"]  # fmt: skip
    assert [r["content"] for r in cli] == [r["content"] for r in got]


def test_secrets_are_masked_in_every_answer(world: World) -> None:
    world.journal(DAY, f"## 09:00\n- The staging key is {SECRET} for billing\n")
    served = service(world, secrets=(SECRET,))
    recall = served.call("recall", {"query": "staging key billing"})
    where = served.call("where", {"what": "staging key"})
    refused = served.call("where", {"what": SECRET * 100})
    for answer in (recall, where, refused):
        assert SECRET not in answer.text
    assert "****" in recall.text and "****" in where.text


def test_an_answer_is_bounded_in_each_text_and_in_all(world: World) -> None:
    # each bullet past TEXT_MAX, and 50 of them cut to it past ANSWER_MAX (3 bytes a character)
    bullets = "".join(
        f"- 迁移 {n} " + "回滚" * (answers.TEXT_MAX // 2 + 100) + "\n" for n in range(60)
    )
    world.journal(DAY, "## 09:00\n" + bullets)
    answer = ok(service(world).call("recall", {"query": "迁移", "limit": 50}))
    size = len(answer and json.dumps(answer, ensure_ascii=False).encode())
    assert size <= answers.ANSWER_MAX
    rows = answer["data"]["results"]
    assert rows and all(len(r["content"]) <= answers.TEXT_MAX + 10 for r in rows)
    assert answer["data"]["truncated"] == 50 - len(rows)
    assert any("cut to" in w for w in answer["warnings"])


def caught_up(world: World) -> Any:
    """A service whose index caught up with the synced journal on a first question."""
    synced(world)
    served = service(world)
    ok(served.call("recall", {"query": "billing"}))
    return served


def test_an_index_a_sync_holds_answers_as_it_was(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = caught_up(world)
    tried: list[int] = []

    def locked(*_a: object, **_k: object) -> int:
        tried.append(1)
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(RecallIndex, "refresh", locked)
    with (world.workspace / "memory" / f"{DAY}.md").open("a") as fh:
        fh.write("- Late note about the zeppelin\n")
    for _ in range(2):  # not caught up: the next call tries again
        answer = ok(served.call("recall", {"query": "dark mode"}))
        assert answer["data"]["results"][0]["content"].startswith("Remember: Alice prefers dark")
        assert any("not refreshed (database is locked)" in w for w in answer["warnings"])
    assert len(tried) == 2


def test_an_unchanged_markdown_is_not_looked_through_again(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = caught_up(world)
    refreshed: list[int] = []
    real = RecallIndex.refresh

    def counted(self: RecallIndex, *args: Any) -> int:
        refreshed.append(1)
        return real(self, *args)

    monkeypatch.setattr(RecallIndex, "refresh", counted)
    for _ in range(3):
        ok(served.call("recall", {"query": "billing"}))
    assert refreshed == []
    (world.workspace / "MEMORY.md").write_text("# MEMORY\n- Zeppelins are grounded\n")
    found = ok(served.call("recall", {"query": "zeppelins grounded"}))["data"]["results"]
    assert refreshed == [1] and found[0]["location"] == "MEMORY.md:2"


def test_a_question_opens_the_sync_ledger_only_after_a_sync_wrote_it(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's recall names no URI (2.2): the ledger does. Asked once, it is kept until a
    run writes the ledger again (issue 41: every serve question opened it)."""
    served = caught_up(world)  # its first question read the ledger
    opened: list[int] = []
    real = LedgerReader.open

    def counted(state: Any) -> Any:
        opened.append(1)
        return real(state)

    monkeypatch.setattr(LedgerReader, "open", counted)
    uri = f"event://journal/{DAY}#0930-1"
    for _ in range(3):
        rows = ok(served.call("recall", {"query": "billing migration"}))["data"]["results"]
        assert next(r for r in rows if r["content"].startswith("Met Bob"))["uri"] == uri
    assert opened == []
    world.journal("2026-11-30", "## 08:00\n- Zeppelin hangar inspection booked\n")
    assert world.run("sync", "--now", "2026-11-30T22:00").code == 0
    opened.clear()
    rows = ok(served.call("recall", {"query": "zeppelin hangar"}))["data"]["results"]
    assert rows[0]["uri"] == "event://journal/2026-11-30#0800-1"
    assert opened == [1]


def test_serving_writes_nothing_of_the_workspace_nor_the_ledger_or_history(world: World) -> None:
    synced(world)
    state = state_of(world.workspace)
    names = ("ledger.sqlite3", "runs.json", "lock")  # the lock as sync left it: never taken
    kept = {name: (state / name).read_bytes() for name in names}
    before = digest(world.workspace)
    served = service(world)
    served.warm()
    for tool, args in (("recall", {"query": "billing"}), ("where", {"what": "billing"}),
                       ("status", {})):  # fmt: skip
        ok(served.call(tool, args))
    served.close()
    assert digest(world.workspace) == before
    assert {name: (state / name).read_bytes() for name in kept} == kept


def test_warming_up_opens_the_index_and_the_store_and_its_notices_come_first(
    world: World, tmp_path: Path
) -> None:
    synced(world)
    (state_of(world.workspace) / "recall.sqlite3").write_bytes(b"not a database" * 100)
    served = service(world)
    served.warm()
    assert served.index is not None
    first = ok(served.call("status", {}))
    assert any("rebuilt from the Markdown" in w for w in first["warnings"])
    second = ok(served.call("status", {}))
    assert not any("rebuilt" in w for w in second["warnings"])


def test_the_store_servers_log_is_cut_back_while_serve_runs(world: World) -> None:
    from memfuse.run.server_log import SERVER_LOG_KEEP, SERVER_LOG_MAX

    synced(world)
    served = service(world)
    log = state_of(world.workspace) / "session-server.log"
    log.write_bytes(b"x" * SERVER_LOG_MAX + b"the last line\n")
    ok(served.call("status", {}))
    kept = log.read_bytes()
    assert len(kept) == SERVER_LOG_KEEP and kept.endswith(b"the last line\n")


def test_serve_without_a_workspace_says_so_on_stderr_and_never_on_the_channel(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from memfuse.cli import app

    result = CliRunner().invoke(app, ["serve", "-w", str(tmp_path / "nowhere")])
    assert result.exit_code == 66
    assert result.stdout == "" and "does not exist" in result.stderr


def test_each_call_reads_the_runs_clock_when_no_time_is_pinned(world: World) -> None:
    from datetime import UTC, datetime

    synced(world)
    moments = iter([datetime(2026, 12, 1, 9, tzinfo=UTC), datetime(2026, 12, 2, 9, tzinfo=UTC)])
    settings = load_settings({"workspace": str(world.workspace), "now": NOW})
    seams = replace(world.seams, clock=lambda: next(moments))
    served = serve.service(RunContext(settings, Reporter(), seams=seams), pinned_now=False,
                           clock=Clock(), retry_after=30.0)  # fmt: skip
    first, second = (ok(served.call("status", {}))["data"]["at"] for _ in range(2))
    assert (first, second) == ("2026-12-01T09:00:00+00:00", "2026-12-02T09:00:00+00:00")


def test_the_text_is_a_summary_for_a_model_not_the_envelope_again(world: World) -> None:
    synced(world)
    served = service(world)
    recall = served.call("recall", {"query": "billing migration", "limit": 3})
    rows = ok(recall)["data"]["results"]
    assert len(recall.text) < len(json.dumps(recall.data, ensure_ascii=False)) / 2
    lines = recall.text.splitlines()
    assert lines[0] == "3 results for 'billing migration' from agent-memory and journals"
    top = rows[0]
    assert lines[1] == f"1. [{top['location']} · {top['date']} · {top['type']} · {top['uri']}]"
    assert lines[2] == f"   {top['content']}"  # the whole bullet, as a model reads it
    where = served.call("where", {"what": "dark mode"})
    assert ok(where)["data"]["bullets"]
    assert where.text.splitlines()[1].startswith(
        f"- memory/{DAY}.md:3 knowledge://journal/{DAY}#0930-2 (knowledge): Remember"
    )
    status = served.call("status", {})
    assert ok(status) and status.text.startswith("memfuse status — ")
    world.gateway.down = "failed"
    degraded = served.call("recall", {"query": "dark mode"})
    assert degraded.text.splitlines()[-2:] == [
        "status: degraded", f"warning: {ok(degraded)['warnings'][0]}",
    ]  # fmt: skip


def test_every_part_of_an_answer_is_bounded_even_a_thousand_warnings(
    world: World, tmp_path: Path
) -> None:
    """`where` over 1 500 journals that each have a second hard link: a warning each (1 312 169
    bytes for 4 000 before, against the 262 144 bound)."""
    from datetime import date, timedelta

    world.journal(DAY, JOURNAL)
    links = tmp_path / "links"
    links.mkdir()
    first = date(2022, 1, 1)
    for n in range(1500):
        path = world.journal((first + timedelta(days=n)).isoformat(), "## 09:00\n- linked\n")
        os.link(path, links / path.name)
    answer = service(world).call("where", {"what": "dark mode"})
    envelope = ok(answer)
    assert len(json.dumps(envelope, ensure_ascii=False).encode()) <= answers.ANSWER_MAX
    assert len(answer.text.encode()) <= answers.ANSWER_MAX
    warnings = envelope["warnings"]
    assert len(warnings) == answers.WARNINGS_MAX and "hard links" in warnings[0]
    assert warnings[-1] == "and 1481 more warnings (memfuse's log has them all)"
    assert (
        envelope["data"]["bullets"][0]["text"]
        == "Remember: Alice prefers dark mode in every editor"
    )


def test_warming_up_asks_the_local_index_but_never_the_stores_recall(world: World) -> None:
    synced(world)
    asked = world.gateway.count("recall")
    served = service(world)
    served.warm()
    assert world.gateway.count("recall") == asked  # a recall counts what it returns as read
    assert served.index is not None
    # The index caught up in the warm-up: the first question does not refresh it again.
    found = ok(served.call("recall", {"query": "dark mode"}))
    assert found["data"]["results"][0]["content"].startswith("Remember: Alice prefers dark")


def test_warming_up_reads_a_note_back_once_and_writes_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 57: a fresh serve's first note imported the journal reader's parts (markdown-it,
    ~15 ms of CPU, more beside a warm-up) when the warm-up had no journal to re-read. The
    warm-up plans a note on no journal, pure: the workspace is as it was."""
    synced(world)
    before = {p: p.read_bytes() for p in world.workspace.rglob("*") if p.is_file()}
    planned: list[tuple[Any, str]] = []
    real = serve.plan

    def counted(view: Any, text: str, *args: Any) -> Any:
        planned.append((view, text))
        return real(view, text, *args)

    monkeypatch.setattr(serve, "plan", counted)
    service(world).warm()
    assert planned == [(None, "memfuse warm-up")]
    assert {p: p.read_bytes() for p in world.workspace.rglob("*") if p.is_file()} == before


def test_a_store_that_cannot_start_still_leaves_the_local_path_warm(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memfuse.errors import MemfuseError

    synced(world)
    world.gateway.down = "failed"
    served = service(world)
    with pytest.raises(MemfuseError):  # serve logs it; the first call says it
        served.warm()
    refreshed: list[int] = []
    real = RecallIndex.refresh

    def counted(self: RecallIndex, *args: Any) -> int:
        refreshed.append(1)
        return real(self, *args)

    monkeypatch.setattr(RecallIndex, "refresh", counted)
    first = ok(served.call("recall", {"query": "dark mode"}))
    assert refreshed == []  # the warm-up caught the index up before the store was tried
    assert first["data"]["sources"] == ["journals"]
    assert first["data"]["results"][0]["content"].startswith("Remember: Alice prefers dark")
