"""What each command answers: the shape of its `--json` `data`, one typed dictionary per command.

These are the promise to agents and scripts (docs/operations.md, "Output"): a key named here
is present with this type; `NotRequired` keys appear only in the case their comment says. The
lines a person reads are rendered from this data alone (memfuse.run.render). A run that could
not do its job at all (a bad option, a held lock, an internal error) answers `FailureData`.
"""

# No `from __future__ import annotations`: Python 3.11's TypedDict reads NotRequired only from
# evaluated annotations, and the tests check envelopes against __required_keys__.
from typing import Any, NotRequired, TypedDict

from memfuse.recall.answer import RecallAnswer


class FailureData(TypedDict):
    error: str  # the same line goes to stderr


class AlarmData(TypedDict):
    """Added by memfuse.run.runner to a sync, surface or tidy run that escalates (exit 4)."""

    reason: str
    since: str


class ExplainRow(TypedDict):
    position: str
    type: str
    keyword: str | None
    uri: str
    text: str


class RejectedRow(TypedDict):
    position: str
    reason: str


class StaleRow(TypedDict):
    position: str
    uri: str | None
    memory_id: str | None
    created_by_memfuse: bool


class PrunedRow(TypedDict):
    position: str
    memory_id: str | None
    deleted: bool


class UnaccountedRow(TypedDict):
    file: str  # a journal form, as a person finds it in the workspace
    lines: int  # lines of text a viewer shows that are no bullet, code, comment or dreaming
    first_line: int  # the first of them (1-based)


class DeepRow(TypedDict):
    file: str  # a journal form, as a person finds it in the workspace
    lines: int  # its lines nested too deep to read as CommonMark does (`deep_lines`)


class HiddenRow(TypedDict):
    file: str  # a journal form, as a person finds it in the workspace
    bullets: int  # its bullets and blocks a preview does not show whole (`hidden_items`)
    first_line: int  # the first of them (1-based)


class AccountingData(TypedDict):
    """What a sync read (issue 39), summed over the journal forms it read."""

    forms: int  # journal forms read (a daily, an archived copy, a roll-up)
    items: int  # list items a viewer shows, outside code and dreaming blocks
    empty_items: int  # of those, items with no text once comments are out
    bullets: int  # the bullets of the days read, each form's copies counted once
    to_send: int  # new, changed, sharing a changed memory, or in a shared memory rewritten
    unchanged: int
    shared: int  # unchanged bullets the store keeps in another bullet's memory
    code_lines: int  # left out as code (fenced or indented)
    comments: int  # HTML comments, their text left out
    comment_chars: int
    dreaming_blocks: int  # the host's dreaming blocks, between their own markers
    dreaming_lines: int
    deep_lines: int  # lines nested too deep to parse, read as whole bullets or text
    deep: list[DeepRow]  # the first forms holding such lines
    hidden_items: int  # bullets and blocks a preview does not show whole: sent, and named
    hidden: list[HiddenRow]  # the first forms holding such bullets
    unaccounted_lines: int  # text a viewer shows that is none of the above: warned about
    unaccounted: list[UnaccountedRow]  # the first forms holding such text
    unaccounted_forms: int


class SyncData(TypedDict):
    dry_run: bool
    scope: str  # changed (a plain sync) | all | date D | since D | days N
    counts: dict[str, int]
    dates: list[str]
    paused_since: NotRequired[str]  # `memfuse rollback` is in force: nothing was sent
    lost_left: NotRequired[int]  # after a verification found losses: those not restored yet
    today_journal: NotRequired[str]  # when no journal was read and today's does not exist
    index: NotRequired[dict[str, int]]  # when the index was verified (--verify, a reset)
    index_line: NotRequired[str]
    explain: NotRequired[list[ExplainRow]]  # --explain
    would_send: NotRequired[list[dict[str, Any]]]  # --dry-run: the remember arguments
    plan: dict[str, Any]  # to send, stale, to prune, to send again (memfuse.sync.plan.Plan)
    rebuilt: NotRequired[int]  # entries a fresh ledger took back from the store
    resent: NotRequired[int]  # bullets sent again because they shared a memory with a change
    accounting: NotRequired[AccountingData]  # what was read, and what the rules took
    refolded: NotRequired[int]  # shared memories rewritten with their bullets' texts now
    calls: int
    recall_index_refreshed: NotRequired[int | None]  # not under --dry-run
    recall_index_embedded: NotRequired[int]  # with a model of meaning, after the lock
    stale: list[StaleRow]
    rejected: list[RejectedRow]
    pruned: list[PrunedRow]
    alarm: NotRequired[AlarmData]


class KeptLines(TypedDict):
    count: int  # lines of RECENT.md memfuse had not written, kept before it was rewritten
    copy: str  # where: RECENT.kept.md beside it, or the state folder's copy


class SurfaceData(TypedDict):
    source: str  # agent-memory | journals | kept
    path: str | None  # the file written; None under --stdout or --dry-run
    dry_run: bool
    target: str  # the RECENT.md this run is about, written or not
    kept: NotRequired[bool]  # the old RECENT.md was kept: nothing new to surface
    lines: NotRequired[int]
    sections: NotRequired[dict[str, int]]
    text: NotRequired[str]  # --stdout: the rendered RECENT.md, which is also the payload
    user_lines: NotRequired[KeptLines]
    alarm: NotRequired[AlarmData]
    recall_index_embedded: NotRequired[int]  # with a model of meaning, after the lock


class ConsistencyItem(TypedDict):
    memory: str
    memory_id: str | None
    memory_md_line: str | None  # None: not in MEMORY.md
    line_no: int | None
    similarity: float
    verdict: str  # consistent | related | conflict | not-in-memory-md
    why: str | None  # for a conflict: what changed


class ConsistencyData(TypedDict):
    status: str  # ok | conflict | skipped
    reason: NotRequired[str]  # when skipped
    summary: str
    items: list[ConsistencyItem]


class MemoryMdData(TypedDict):
    exists: bool
    lines: int
    backup: str | None
    backup_made: NotRequired[bool]
    over_limit: bool
    empty: NotRequired[bool]  # emptied: `backup` is then its last backup with text, if any


class ArchivedRow(TypedDict):
    date: str
    weekly: str
    archived_to: NotRequired[str]  # not under --dry-run
    appended: int | None  # None under --dry-run


class RefusedRow(TypedDict):
    date: str
    unsynced: int


class ArchiveData(TypedDict):
    archived: list[ArchivedRow]
    refused: list[RefusedRow]


class TidyData(TypedDict):
    counts: NotRequired[dict[str, int]]  # reflect's per phase ("decay.decayed"), conflicts, …
    dry_run: bool
    reflect: dict[str, Any] | str | None  # counts per phase, prose (3.x), or None (failed)
    reflect_totals: dict[str, int] | None
    consistency: ConsistencyData
    memory_md: MemoryMdData
    status: dict[str, Any] | None  # the store's status, under --dry-run only
    index: NotRequired[dict[str, int]]  # when a ledger exists
    index_line: NotRequired[str]
    archive: NotRequired[ArchiveData]  # --archive
    alarm: NotRequired[AlarmData]
    recall_index_embedded: NotRequired[int]  # with a model of meaning, after the lock


RecallData = RecallAnswer  # one question's answer: the recall engine's own (memfuse.recall.answer)


class ServeData(TypedDict):
    """`memfuse serve`, once stdin closed: the calls it answered, each as its tool's envelope."""

    calls: int


class NoteData(TypedDict):
    """`memfuse serve`'s `note`: where the bullet was written, and what sync will make of it."""

    file: str  # memory/YYYY-MM-DD.md
    line: int  # 1-based line of the bullet
    section: str  # HH:MM of the section it is under
    made: str | None  # "journal" or "section" when the note made it
    position: str  # the ledger's key, YYYY-MM-DD#HHMM-N
    uri: str  # the URI the next sync gives it (its type as classified now)
    type: str
    text: str  # the bullet as the journal reader reads it back


class RecallBatchData(TypedDict):
    """`recall --batch`: each question's envelope printed as answered; the run, how many."""

    queries: int


class CommandView(TypedDict):
    last_run: dict[str, Any] | None  # the run record (memfuse.run.history.RunRecord)
    last_success: str | None
    alarm: str | None
    # The installed schedule's time (ISO, with its zone) this command has not run since, an
    # hour after it passed; None when on time or no schedule was installed (`memfuse cron`).
    missed: str | None
    missed_runs: int  # scheduled runs since the last run (and the install) that never came
    manual: NotRequired[str | None]  # a run by hand, not the schedule's, that failed


class RecentView(TypedDict):
    path: str
    exists: bool
    age_hours: float | None
    written: NotRequired[str]
    bytes: NotRequired[int]


class PendingRow(TypedDict):
    position: str
    at: str  # when the call failed
    reason: str


class LedgerView(TypedDict):
    outcomes: dict[str, int] | None  # None: no ledger yet, or it cannot be read
    error: NotRequired[str]  # why it cannot be read
    positions: NotRequired[int]
    stored: NotRequired[int]
    rejected: NotRequired[int]
    pending_retry: NotRequired[int]  # bullets whose last call failed: the next sync retries
    stale: NotRequired[int]
    pending: NotRequired[list[PendingRow]]  # the first few, with why their call failed
    rejections: NotRequired[list[RejectedRow]]  # the first few, with the store's reason


class ScheduleView(TypedDict):
    """The schedule `memfuse cron --install` put in place (installed False: none recorded)."""

    installed: bool
    format: NotRequired[str]
    where: NotRequired[str]  # where the scheduler keeps it
    zone: NotRequired[str | None]  # the zone its times are read in (None: local rules)
    next_run: NotRequired[str | None]  # the next scheduled run, and of which command
    next_command: NotRequired[str | None]
    alerts: NotRequired[str | None]  # where a failed run is reported, or that it is not


class StatusData(TypedDict):
    workspace: str
    state: str  # memfuse's own state folder (ledger, history, lock, log), outside the workspace
    at: str  # this status's clock, which the ages are counted from
    commands: dict[str, CommandView]
    recent: RecentView
    ledger: LedgerView
    lock: str | None
    generation: int | None
    generation_seen: str | None  # when `memfuse doctor` saw that generation
    paused_since: NotRequired[str]  # `memfuse rollback` is in force
    alarms: list[str]
    schedule: NotRequired[ScheduleView]


class AttemptRow(TypedDict):
    at: str
    outcome: str  # added updated merged skipped rejected failed
    reason: str  # the store's own words (or why the call failed)


class BulletRow(TypedDict):
    location: str  # memory/2026-12-01.md:7 (or its archived or weekly form)
    position: str  # YYYY-MM-DD#HHMM-N
    text: str
    uri: str  # pinned at its first sync, else the one it would get
    type: str
    outcome: str | None  # the ledger's; None: never settled (not sent, or every call failed)
    memory_id: str | None
    created_by_memfuse: bool
    attempts: list[AttemptRow]  # the last few, oldest first
    in_store: bool | None  # the store holds this text at the URI now; None: it did not answer
    store_text: NotRequired[str]  # what the store holds at the URI instead (merged, edited)


class WhereData(TypedDict):
    query: str
    matches: int  # bullets that match; at most 10 are shown
    bullets: list[BulletRow]


class RollbackRow(TypedDict):
    uri: str
    memory_id: str | None
    # forgotten | forget (--dry-run: would be) | gone (not in the store) | not memfuse's
    # (merged into, or someone else's at the URI: kept) | failed (the forget call failed)
    outcome: str


class RollbackData(TypedDict):
    dry_run: bool
    undo: bool  # --undo: sync resumes and re-sends what was withdrawn
    candidates: list[RollbackRow]  # each memory memfuse synced to a journal URI, and its fate
    counts: dict[str, int]  # memories by outcome
    withdrawn: int  # ledger positions marked withdrawn (--undo: marked to be sent again)
    paused_since: str | None  # sync sends nothing since then, until --undo
    # Not with --undo: the URIs to forget and to keep, the positions to withdraw
    # (commands.rollback.Plan); --dry-run shows the plan a real run would carry out
    plan: NotRequired[dict[str, list[str]]]


class CheckRow(TypedDict):
    name: str
    ok: bool
    detail: str
    critical: bool


class DoctorData(TypedDict):
    checks: list[CheckRow]
    config: dict[str, str]
    config_shown: bool  # --show-config: the settings are printed after the checks
    generation: NotRequired[int]  # when the server listed its tools
    error: NotRequired[str]  # a critical check failed


class InstallConfigData(TypedDict):
    """`doctor --install-config FILE`: agent-memory's entry merged into an mcporter config."""

    path: str
    backup: str | None  # the file as it was, kept beside it (None: there was none, or no change)
    entry: dict[str, Any]
    changes: list[str]  # notes, then the diff


class PrintConfigData(TypedDict):
    mcporter_config: dict[str, Any]
    text: str  # the payload


class CronData(TypedDict):
    """`memfuse cron` printing or installing a schedule."""

    format: str
    label: str  # the schedule's name: every marker, unit and job name of it starts with it
    files: dict[str, str]  # file name -> text, as the scheduler has them
    text: str  # the payload: as the scheduler prints it (by default each file under a header)
    notes: list[str]
    changes: list[str]  # --install/--remove: what was done (a diff where the scheduler has one)


class CronJobCheck(TypedDict):
    job: str  # where the scheduler's text holds it: "line 12", a unit or job name
    command: str
    when: str
    ok: bool
    findings: list[str]  # what the job sets that the check did not use, and why it matters
    problems: list[str]
    unchecked: NotRequired[list[str]]  # its own store setup: not tried, and why (issue 47)


class CronCheckData(TypedDict):
    format: str
    source: str
    jobs: list[CronJobCheck]
    error: NotRequired[str]


class RerankRow(TypedDict):
    index: int
    score: float
    document: str


class RerankCheck(TypedDict):
    name: str
    ok: bool
    detail: str


class RerankTestData(TypedDict):
    provider: str
    model: str
    endpoint: str
    latency_ms: int | None
    query: str
    results: list[RerankRow]
    checks: list[RerankCheck]
    comparison: NotRequired[dict[str, list[str]]]  # --from-recall: without / with
    error: NotRequired[str]
