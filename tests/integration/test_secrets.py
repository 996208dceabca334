"""API keys never reach stdout, stderr, the log, or mcporter's argv — for every command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import UNREACHED, StoreServer
from tests.fakes import state_of
from tests.rerank_server import base_url, serve

pytestmark = pytest.mark.integration
MEMFUSE = str(Path(sys.executable).parent / "memfuse")
SECRETS = {
    "AGENT_MEMORY_RERANK_API_KEY": "rk-secret-AAAA-0123456789",
    "OPENAI_API_KEY": "sk-secret-BBBB-0123456789",
    "EMBEDDING_PROVIDER_API_KEY": "ek-secret-CCCC-0123456789",
}


def test_no_secret_anywhere(store: StoreServer, workspace: Path, tmp_path: Path) -> None:
    (workspace / "memory" / "2026-11-29.md").write_text(
        "## 09:00\n- Reviewed the billing plan with Jonas\n"
    )
    (workspace / "MEMORY.md").write_text("- 记住：周五下午不发版\n")
    argv_log = tmp_path / "mcporter-argv.log"
    recorder = tmp_path / "mcporter"
    recorder.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> {argv_log}\nexec {store.mcporter} "$@"\n'
    )
    recorder.chmod(0o755)
    common = [
        "-w",
        str(workspace),
        "--mcporter",
        str(recorder),
        "--mcporter-config",
        str(store.config),
        "--transport",
        "mcporter",  # the argv recorder stands in for mcporter
        "-v",
    ]
    outputs = []
    with serve("error500") as server:
        env = {**os.environ, **SECRETS, "AGENT_MEMORY_RERANK_PROVIDER": "jina",
               "AGENT_MEMORY_RERANK_BASE_URL": base_url(server)}  # fmt: skip
        for args in (["sync", "--date", "2026-11-29"], ["surface"], ["tidy"], ["doctor"],
                     ["rerank-test", "q", "a", "b"], ["sync", "--json", "--date", "2026-11-29"]):  # fmt: skip
            done = subprocess.run(
                [MEMFUSE, *args, *common],
                capture_output=True,
                text=True,
                env=env,
                timeout=UNREACHED,
                check=False,
            )
            outputs += [done.stdout, done.stderr]
    assert "reranker" in "".join(outputs)  # doctor did show the reranker line
    log = (state_of(workspace) / "memfuse.log").read_text()
    argv = argv_log.read_text()
    assert "call agent-memory.remember --args -" in argv
    for secret in SECRETS.values():
        for text in (*outputs, log, argv):
            assert secret not in text
