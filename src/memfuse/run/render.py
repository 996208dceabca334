"""The lines a person reads, one function per command, each from that command's `--json` data.

Pure: no settings, no clock, no files. A command builds its typed data (memfuse.run.results) and
hands it here; memfuse.run.runner prints what comes back (or the envelope under `--json`). A
payload — RECENT.md under `surface --stdout`, the schedule, recall's answer — is not rendered
here: it travels in `CommandResult.payload` and is printed verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memfuse.run.history import RunRecord, stamp
from memfuse.run.results import (
    CheckRow,
    CronCheckData,
    CronData,
    DoctorData,
    InstallConfigData,
    LedgerView,
    NoteData,
    RecallData,
    RecentView,
    RerankTestData,
    RollbackData,
    ScheduleView,
    StatusData,
    SurfaceData,
    SyncData,
    TidyData,
    WhereData,
)

SHOWN_AT_MOST = 10  # rejected and stale positions listed by sync; the rest are in --json
# where: whether the store holds a bullet's text at its URI (None: it did not answer)
HELD = {True: "the store holds it", False: "the store does not hold it",
        None: "the store did not answer"}  # fmt: skip


def sync(data: SyncData) -> list[str]:
    days, counts = data["dates"], data["counts"]
    missing = f"today's journal {data.get('today_journal')} does not exist yet"
    if not days and data["scope"] == "changed":
        span = "none changed since the last run" + (
            f"; {missing}" if "today_journal" in data else ""
        )
    elif not days:
        span = f"none; {missing}" if "today_journal" in data else "none"
    else:
        span = f"{days[0]}..{days[-1]}" if len(days) > 1 else days[0]
    dry = f"dry run, {len(data.get('would_send', []))} to send; " if data["dry_run"] else ""
    tally = ", ".join(f"{n} {outcome}" for outcome, n in counts.items())  # in sync's order
    lines = [f"sync: {len(days)} journal(s) ({span}): {dry}{tally}; {data['calls']} MCP call(s)"]
    plan = data["plan"]
    if data["dry_run"]:
        lines.append(
            f"  plan: {len(plan['send'])} to send, {plan['unchanged']} unchanged,"
            f" {len(plan['stale'])} stale ({len(plan['prune'])} to prune),"
            f" {len(plan['resend'])} to send again (they share a memory with a change)"
            + (f", {len(plan['refold'])} shared memory(ies) to rewrite" if plan.get("refold")
               else "")
        )  # fmt: skip
    elif data.get("resent"):
        lines.append(
            f"  sent again {data['resent']} bullet(s) that shared a memory with a changed or"
            " pruned one, so their text stays in the store"
        )
    if data.get("refolded"):
        lines.append(
            f"  rewrote {data['refolded']} shared memory(ies) once each with the current text of"
            " every bullet the store folded into it"
        )
    accounted = data.get("accounting")
    if accounted is not None and (data["dry_run"] or "index_line" in data):
        lines.append(f"  read: {read_line(accounted)}")
    if "paused_since" in data:
        lines.append(f"  rolled back since {data['paused_since']}: nothing sent"
                     " (`memfuse rollback --undo` resumes)")  # fmt: skip
    if "index_line" in data:
        lines.append(f"  {data['index_line']}")
    if "lost_left" in data:
        left = data["lost_left"]
        lines.append(
            f"  restored {counts.get('restored', 0)};"
            + (f" {left} still lost (no journal holds them now, or their call failed)"
               if left else " nothing lost remains")
        )  # fmt: skip
    for row in data.get("explain", []):
        keyword = f" [{row['keyword']}]" if row["keyword"] else ""
        lines.append(f"  {row['position']}  {row['type']}{keyword}  {row['text'][:60]!r}")
    for sent in data.get("would_send", []):
        lines.append(f"  would send {sent['uri']}  {sent['content'][:60]!r}")
    for rejected in data["rejected"][:SHOWN_AT_MOST]:
        lines.append(
            f"  rejected by the store's gate: {rejected['position']} ({rejected['reason']})"
        )
    for stale in data["stale"][:SHOWN_AT_MOST]:
        lines.append(f"  stale: {stale['position']} (no longer in the journal; --prune forgets it)")
    for pruned in data["pruned"]:
        what = (
            "deleted from the store" if pruned["deleted"] else "released (not created by memfuse)"
        )
        lines.append(f"  pruned {pruned['position']}: {what}")
    return lines


def surface(data: SurfaceData) -> list[str]:
    if data.get("kept"):
        return [f"surface: {data['target']} kept (nothing new to surface)"]
    target = f"dry run, {data['target']} not written" if data["dry_run"] else data["target"]
    counts = data.get("sections", {})
    lines = [
        f"surface: {target} from {data['source']}: {counts.get('emotion', 0)} emotion, "
        f"{counts.get('knowledge', 0)} knowledge, {counts.get('event', 0)} event entries, "
        f"{data.get('lines', 0)} lines"
    ]
    kept = data.get("user_lines")
    if kept:
        lines.append(f"  {kept['count']} line(s) memfuse had not written kept in {kept['copy']}")
    return lines


def tidy(data: TidyData) -> list[str]:
    report = data["reflect"]
    if isinstance(report, dict):
        parts = [f"{phase}: " + ", ".join(f"{k} {v}" for k, v in counts.items())
                 for phase, counts in report.items() if isinstance(counts, dict)]  # fmt: skip
        lines = ["reflect: " + "; ".join(parts)]
    elif isinstance(report, str):
        totals = data["reflect_totals"]
        if totals:
            lines = [f"reflect: {totals['before']} → {totals['after']} memories (prose answer;"
                     " the whole text is in the log)"]  # fmt: skip
        else:
            lines = [f"reflect (prose answer): {report}"]
    else:
        lines = [
            "reflect: skipped (dry run)" if data["dry_run"] else "reflect: failed (see warning)"
        ]
    checked = data["consistency"]
    lines.append(checked["summary"])
    for item in checked["items"]:
        if item["verdict"] == "conflict":
            lines.append(f"  ⚠️ store:     {item['memory']}")
            lines.append(
                f"     MEMORY.md: {item['memory_md_line']}"
                f" (line {item['line_no']}; {item['why']}; MEMORY.md is the truth)"
            )
        elif item["verdict"] == "related":
            lines.append(f"  (related to MEMORY.md line {item['line_no']}) {item['memory']}")
        elif item["verdict"] == "not-in-memory-md":
            lines.append(f"  (not in MEMORY.md) {item['memory']}")
    if "index_line" in data:
        lines.append(data["index_line"])
    md = data["memory_md"]
    if md.get("empty"):
        last = f"its last backup with text: {md['backup']}" if md["backup"] else "no backup"
        lines.append(f"MEMORY.md: EMPTY (was it emptied by mistake? {last})")
    elif md["exists"]:
        backup = (
            "backed up to " + str(md["backup"])
            if md.get("backup_made")
            else "backup for today exists"
            if md["backup"]
            else "not backed up (dry run)"
        )
        lines.append(f"MEMORY.md: {md['lines']} lines, {backup}")
    else:
        lines.append("MEMORY.md: not found")
    if "archive" in data:
        rolled = data["archive"]
        weeks = sorted({a["weekly"] for a in rolled["archived"]})
        verb = "would archive" if data["dry_run"] else "archived"
        lines.append(
            f"archive: {verb} {len(rolled['archived'])} journal(s) into {len(weeks)} weekly"
            f" file(s); {len(rolled['refused'])} refused (unsynced bullets)"
        )
    return lines


def recall(data: RecallData) -> list[str]:
    origin = " + ".join(data["sources"]) or "nothing"
    rerank_note = ", reranked" if data["reranked"] else ""
    lines = [
        f"recall {data['query']!r}: {len(data['results'])} result(s) from {origin}{rerank_note}"
    ]
    for n, row in enumerate(data["results"], start=1):
        where = ", ".join(filter(None, (row["location"], row["uri"]))) or row["id"]
        lines.append(f"{n:>2}. [{row['type']}] {row['content'][:100]}  ({where}; {row['reason']})")
    return lines


def status(data: StatusData) -> list[str]:
    now = datetime.fromisoformat(data["at"])
    lines = [f"memfuse status — {data['workspace']}"]
    for name, view in data["commands"].items():
        lines.append(f"  {name:<8} {_command_line(view['last_run'], view['last_success'], now)}")
        read = (view["last_run"] or {}).get("read")
        if isinstance(read, dict) and read:
            lines.append(f"           read {read_line(read)}")
        lines += [f"           {manual}" for manual in [view.get("manual")] if manual]
        if view.get("missed"):
            count = view.get("missed_runs", 1)
            runs = (
                f"its last {count} scheduled runs, the latest"
                if count > 1
                else "its scheduled run of"
            )
            lines.append(f"           missed {runs} {view['missed']}")
    lines.append(f"  RECENT.md {_recent_line(data['recent'], now)}")
    lines.append(f"  ledger   {_ledger_line(data['ledger'])}")
    if "paused_since" in data:
        lines.append(
            f"  paused   sync rolled back since {data['paused_since']}: nothing is sent;"
            " `memfuse rollback --undo` resumes"
        )
    for row in data["ledger"].get("pending", []):
        lines.append(f"    pending {row['position']} (failed {stamp(row['at'])}: {row['reason']})")
    for rejected in data["ledger"].get("rejections", []):
        lines.append(f"    rejected {rejected['position']} ({rejected['reason']})")
    seen = data["generation_seen"]
    lines.append(
        f"  store    agent-memory {data['generation']}.x"
        f" (as `memfuse doctor` saw it, {stamp(seen)})"
        if data["generation"] is not None and seen is not None
        else "  store    generation unknown (run `memfuse doctor`)"
    )
    lines += _schedule_lines(data.get("schedule"))
    holder = data["lock"]
    lines.append(f"  lock     {f'held by {holder}' if holder else 'free'}")
    lines.append(f"  state    {data['state']}")
    lines += data["alarms"]  # each says who needs a person and why
    if not data["alarms"]:
        lines.append(_all_clear(data))
    return lines


def _all_clear(data: StatusData) -> str:
    """The closing line when no alarm is raised: that nothing needs a person — unless nothing
    has run and nothing is scheduled to, which is a setup not finished (an install that
    stopped on a failed step), not a lifecycle that is well."""
    ran = any(view["last_run"] for view in data["commands"].values())
    schedule = data.get("schedule")
    if ran or (schedule is not None and schedule["installed"]):
        return "nothing needs a person"
    return (
        "not set up yet: no run has happened here and no schedule is installed; finish the"
        " install (`memfuse doctor` says what is missing, `memfuse cron --install` schedules)"
    )


def _schedule_lines(view: ScheduleView | None) -> list[str]:
    if view is None:
        return []
    if not view["installed"]:
        return ["  schedule none installed here (`memfuse cron --install` puts one in place)"]
    upcoming = (
        f"; next: {view.get('next_command')} at {stamp(str(view['next_run']))}"
        f"{' ' + str(view['zone']) if view.get('zone') else ''}"
        if view.get("next_run")
        else ""
    )
    lines = [f"  schedule {view.get('format')}: {view.get('where')}{upcoming}"]
    if view.get("alerts"):
        lines.append(f"           failures: {view['alerts']}")
    return lines


def _command_line(last_run: dict[str, object] | None, success: str | None, now: datetime) -> str:
    if last_run is None:
        return "never run"
    last = RunRecord.from_json(last_run)
    text = f"last run {ago(last.at, now)}: {last.status}, store {last.store}"
    if last.counts:
        shown = ", ".join(f"{v} {k}" for k, v in last.counts.items() if v)
        text += f" ({shown or 'nothing to do'})"
    if not last.succeeded:
        when = ago(datetime.fromisoformat(success), now) if success else None
        text += f"; last success {when}" if when else "; no success"
    return text


def _recent_line(recent: RecentView, now: datetime) -> str:
    if not recent["exists"] or "written" not in recent:
        return "missing"
    size = f"{recent['bytes']} bytes" if recent.get("bytes") else "empty"
    return f"written {ago(datetime.fromisoformat(recent['written']), now)}, {size}"


def _ledger_line(ledger: LedgerView) -> str:
    if "error" in ledger:
        return ledger["error"]
    if ledger["outcomes"] is None:
        return "no ledger yet (nothing synced)"
    return (
        f"{ledger.get('positions', 0)} bullet(s): {ledger.get('stored', 0)} in the store,"
        f" {ledger.get('rejected', 0)} rejected by its gate, {ledger.get('pending_retry', 0)}"
        f" pending retry; last sync: {ledger.get('stale', 0)} stale"
    )


def ago(moment: datetime, now: datetime) -> str:
    """`2026-12-03 14:05 (3 h ago)`: a moment, in `now`'s zone, and how long before it was."""
    seconds = (now - moment).total_seconds()
    when = stamp(moment.astimezone(now.tzinfo))
    if seconds < 0:
        return when
    if seconds < 3600:
        return f"{when} ({int(seconds // 60)} min ago)"
    if seconds < 172800:
        return f"{when} ({seconds / 3600:.0f} h ago)"
    return f"{when} ({seconds / 86400:.0f} days ago)"


def rollback(data: RollbackData) -> list[str]:
    if data["undo"]:
        verb = "would mark" if data["dry_run"] else "marked"
        return [f"rollback undone: {verb} {data['withdrawn']} bullet(s) to be sent again by the"
                " next sync"]  # fmt: skip
    counts = data["counts"]
    forgotten = counts.get("forget", 0) if data["dry_run"] else counts.get("forgotten", 0)
    lines = [
        f"rollback{' (dry run)' if data['dry_run'] else ''}:"
        f" {'would forget' if data['dry_run'] else 'forgot'} {forgotten} memories memfuse made;"
        f" {counts.get('not memfuse' + chr(39) + 's', 0)} kept (not memfuse's),"
        f" {counts.get('gone', 0)} already gone, {counts.get('failed', 0)} failed"
    ]
    if shared := counts.get("another workspace's", 0):  # rollback --shared-with
        lines[0] += f"; {shared} kept (another workspace's ledger holds it too)"
    if data["dry_run"]:
        lines += [f"  would forget {r['uri']} ({r['memory_id']})"
                  for r in data["candidates"] if r["outcome"] == "forget"]  # fmt: skip
    elif data["paused_since"]:
        lines.append(
            f"  {data['withdrawn']} bullet(s) withdrawn; sync sends nothing since"
            f" {data['paused_since']} until `memfuse rollback --undo`"
        )
    return lines


def where(data: WhereData) -> list[str]:
    if not data["bullets"]:
        return [f"where: no bullet matches {data['query']!r} in any journal"]
    lines = [f"where: {data['matches']} bullet(s) match {data['query']!r}"]
    if data["matches"] > len(data["bullets"]):
        lines[0] += f" (the first {len(data['bullets'])} shown)"
    for row in data["bullets"]:
        held = HELD[row["in_store"]]
        lines += [
            f"  {row['location']}  {row['position']}  {row['text'][:70]!r}",
            f"    {row['uri']} ({row['type']}); ledger: {row['outcome'] or 'not settled'}"
            f"{', created by memfuse' if row['created_by_memfuse'] else ''}; {held}",
        ]
        if "store_text" in row:
            lines.append(f"    at that URI now: {row['store_text'][:70]!r}")
        lines += [
            f"    {stamp(a['at'])} {a['outcome']}" + (f": {a['reason']}" if a["reason"] else "")
            for a in row["attempts"]
        ]
    return lines


def note(data: NoteData) -> list[str]:
    made = {"journal": " (a new journal)", "section": " (a new section)"}.get(
        data["made"] or "", ""
    )
    return [
        f"noted at {data['file']}:{data['line']}{made}, under {data['section']}",
        f"sync will store it as {data['uri']}",
    ]


def doctor(data: DoctorData) -> list[str]:
    lines = [f"{_verdict(c)}  {c['name']:<9} {c['detail']}" for c in data["checks"]]
    if data["config_shown"]:
        lines.append("")
        lines += [f"  {name} = {value}" for name, value in data["config"].items()]
    return lines


def install_config(data: InstallConfigData) -> list[str]:
    return [f"mcporter config {data['path']}:", *(f"  {c}" for c in data["changes"])]


def _verdict(check: CheckRow) -> str:
    return "ok  " if check["ok"] else "FAIL" if check["critical"] else "warn"


def cron_check(data: CronCheckData) -> list[str]:
    lines = [f"cron --check ({data['format']}): {data['source']}"]
    if not data["jobs"]:
        lines.append("  no memfuse job found")
    for c in data["jobs"]:
        verdict = "FAIL" if not c["ok"] else "NOT CHECKED" if c.get("unchecked") else "ok"
        lines.append(f"  {c['job']}: {verdict}  {c['command']}")
        lines += [f"    not used: {finding}" for finding in c.get("findings", [])]
        lines += [f"    {problem}" for problem in c["problems"]]
        lines += [f"    not checked: {why}" for why in c.get("unchecked", [])]
    return lines


def cron_install(data: CronData) -> list[str]:
    lines = [f"cron ({data['format']}, {data['label']}):"]
    lines += [f"  note: {note}" for note in data["notes"]]
    lines += [f"  {change}" for change in data["changes"]]
    return lines


def rerank_test(data: RerankTestData) -> list[str]:
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    head = [
        f"provider {data['provider']}, model {data['model']}",
        f"endpoint {data['endpoint']}, latency {data['latency_ms']} ms",
        f"query {data['query']!r}",
    ]
    table = Table("rank", "index", "score", "document", box=None, pad_edge=False)
    for rank, row in enumerate(data["results"], start=1):
        table.add_row(str(rank), str(row["index"]), f"{row['score']:.4f}", row["document"][:80])
    buffer = StringIO()
    console = Console(file=buffer, width=120, no_color=True, highlight=False)
    console.print(table)
    if "comparison" in data:
        side = Table("#", "without reranker", "with reranker", box=None, pad_edge=False)
        pairs = zip(data["comparison"]["without"], data["comparison"]["with"], strict=False)
        for rank, (a, b) in enumerate(pairs, start=1):
            side.add_row(str(rank), a[:50], b[:50])
        console.print(side)
    checks = [
        f"{'ok  ' if c['ok'] else 'FAIL'}  {c['name']}: {c['detail']}" for c in data["checks"]
    ]
    return [*head, *buffer.getvalue().rstrip("\n").split("\n"), *checks]


def read_line(a: Mapping[str, Any]) -> str:
    """What a sync read, in one line (its accounting, or the numbers the run history kept)."""
    return (
        f"{a.get('forms', 0)} journal form(s), {a.get('items', 0)} list item(s) →"
        f" {a.get('bullets', 0)} bullet(s) ({a.get('to_send', 0)} to send,"
        f" {a.get('unchanged', 0)} unchanged, {a.get('shared', 0)} in a shared memory); left out:"
        f" {a.get('code_lines', 0)} line(s) of code, {a.get('comments', 0)} comment(s),"
        f" {a.get('dreaming_blocks', 0)} dreaming block(s), {a.get('empty_items', 0)} empty"
        f" item(s); {a.get('unaccounted_lines', 0)} line(s) of other text"
        f" in {a.get('unaccounted_forms', 0)} form(s)"
    )
