"""What in the sync ledger needs a person, as `memfuse status` alarms: a journal the last syncs
could not read, and a bullet that should be in the store and is not (issue 39)."""

from __future__ import annotations

from datetime import datetime, timedelta

from memfuse.ledger.ledger import LedgerError
from memfuse.ledger.reader import LedgerReader
from memfuse.workspace.weekly import MISPLACED

UNHELD_ALARM_AFTER = timedelta(hours=24)  # a bullet's calls failing this long needs a person


def unreadable_alarms(reader: LedgerReader | None, shown: int) -> list[str]:
    """Each journal the last syncs could not read, until one reads it (or it is gone)."""
    try:
        found = reader.unreadable() if reader is not None else []
    except LedgerError:
        return []  # the ledger's own trouble is told by the ledger view
    return [
        f"the journal {path} {why} (since {since})"
        if why.startswith(MISPLACED)
        else f"the journal {path} cannot be read since {since}, so its"
        f" bullets are not in the store ({why}); fix or convert it (UTF-8, a regular file)"
        for path, why, since in found[:shown]
    ]


def unheld_alarms(reader: LedgerReader | None, now: datetime) -> list[str]:
    """Bullets whose calls have kept failing for a day (a run failing for them exits 0)."""
    try:
        stuck = reader.failing_longer_than(now, UNHELD_ALARM_AFTER) if reader else []
    except LedgerError:
        return []  # the ledger's own trouble is told by the ledger view
    return (
        [
            f"{len(stuck)} bullet(s) have not reached the store since {stuck[0][1]} (their calls"
            f" keep failing; the first: {stuck[0][0]}): `memfuse where` tells each one's story"
        ]
        if stuck
        else []
    )
