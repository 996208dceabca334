"""Issue 32, "no module globals in the run's services": what one MCP session's reader saw (a
line past its limit) is that session's own, never another's error (serve runs several)."""

from __future__ import annotations

import sys

import pytest

from memfuse.store.gateway import CallFailed, CallTimeout, ServerSpec
from memfuse.store.gateway.session import SessionGateway
from tests.conftest import StoreServer
from tests.integration.test_outside_answers import gateway

pytestmark = pytest.mark.integration

# A server whose first words are a line past the session's 16 MiB limit, then nothing more.
ENDLESS = "import sys; sys.stdout.write('x' * (17 << 20)); sys.stdout.flush(); sys.stdin.read()"


def test_one_sessions_overlong_line_is_not_told_as_anothers_failure(store: StoreServer) -> None:
    endless = SessionGateway(ServerSpec(sys.executable, ("-c", ENDLESS), {}, None), timeout=2)
    try:
        with pytest.raises((CallFailed, CallTimeout)):
            endless.call("status", {})  # fails while the session opens
    finally:
        endless.close()
    store.set_mode("crash-after")  # the other store crashes on its first call
    other = gateway(store, "session")
    try:
        with pytest.raises(CallFailed) as failed:
            other.call("status", {})
    finally:
        other.close()
    assert "16 MiB" not in str(failed.value)
