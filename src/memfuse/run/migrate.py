"""The state memfuse kept in the workspace (`<workspace>/.memfuse/`) before it moved out of the
agent's reach: its ledger and run history, moved into the state folder once, and ignored after
that. The workspace's own config file stays where it is (it holds tunables only)."""

from __future__ import annotations

import os
import stat

from memfuse.confine import UnsafePath
from memfuse.ledger.ledger import Ledger, LedgerError
from memfuse.ledger.legacy import import_ledger
from memfuse.run.history import History
from memfuse.state.folder import StateFolder
from memfuse.workspace.layout import Workspace


def migrate_legacy(workspace: Workspace) -> str | None:
    """Import a legacy state folder once; the notice for the run to give, or None."""
    state, old = workspace.state, workspace.legacy_state
    if state.path == old or _done(state):
        return None
    try:
        info = os.lstat(old)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        state.write(state.MIGRATED, f"{old}\n".encode())
        return None
    legacy = StateFolder(old)
    try:
        legacy.ensure(create=False)
        imported, refused = _ledger(legacy, state)
        history = _history(legacy, state)
    except (UnsafePath, OSError, LedgerError) as exc:
        state.write(state.MIGRATED, f"{old}\n".encode())
        return f"the old state folder {old} was not migrated ({exc}); it is no longer read"
    finally:
        legacy.close()
    state.write(state.MIGRATED, f"{old}\n".encode())
    if not imported and not history:
        return None
    left = f", {refused} not memfuse's left behind" if refused else ""
    return (
        f"memfuse's state moved out of the workspace, into {state.path}: {imported} ledger"
        f" entries{left}{' and the run history' if history else ''}; {old} is no longer read"
        " but for its config.toml"
    )


def _done(state: StateFolder) -> bool:
    try:
        os.stat(state.MIGRATED, dir_fd=state.fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _ledger(legacy: StateFolder, state: StateFolder) -> tuple[int, int]:
    if not os.path.lexists(legacy.ledger):
        return 0, 0
    ledger = Ledger(state)
    try:
        return import_ledger(legacy, ledger)
    finally:
        ledger.close()


def _history(legacy: StateFolder, state: StateFolder) -> bool:
    """The legacy run history, when it reads cleanly and the new one is still empty."""
    runs, problem = History(legacy).load(repair=False)
    if problem or not any(runs.values()):
        return False
    mine, _problem = History(state).load(repair=False)
    if any(mine.values()):
        return False
    History(state).write(runs)
    return True
