"""scripts/test.sh's stage logic: every stage runs after a failure, a table closes the output,
and the exit says whether any failed. Stages are forced to fail, never run (cheap)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import UNREACHED

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "test.sh"


def run(tmp_path: Path, stages: str, fail: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMFUSE_TEST_STAGES": stages, "MEMFUSE_TEST_FAIL": fail}
    env["MEMFUSE_TEST_LOGS"] = str(tmp_path / "logs")
    return subprocess.run(
        ["bash", str(SCRIPT)],
        env=env,
        capture_output=True,
        text=True,
        timeout=UNREACHED,
        check=False,
    )


def table(out: str) -> dict[str, str]:
    rows = out.split("==> summary")[1].splitlines()[2:]
    return {row.split()[0]: row.split()[1] for row in rows if not row.startswith("==>")}


def test_a_failed_stage_does_not_stop_the_next_and_fails_the_run_at_the_end(
    tmp_path: Path,
) -> None:
    done = run(tmp_path, "ruff format smoke", "ruff format smoke")
    assert done.returncode == 1
    assert table(done.stdout) == {
        "setup": "skipped", "ruff": "FAILED", "format": "FAILED", "mypy": "skipped",
        "unit": "skipped", "integration": "skipped", "smoke": "FAILED", "demo": "skipped",
    }  # fmt: skip
    assert (tmp_path / "logs" / "format.log").read_text().startswith("forced to fail")
    assert "some checks failed" in done.stderr


def test_a_failed_setup_stops_the_run_and_a_run_of_no_stage_passes(tmp_path: Path) -> None:
    failed = run(tmp_path, "setup ruff", "setup")
    assert failed.returncode == 1
    assert table(failed.stdout)["setup"] == "FAILED"
    assert table(failed.stdout)["ruff"] == "skipped"
    assert "==> ruff" not in failed.stdout
    passed = run(tmp_path, "none", "")
    assert passed.returncode == 0
    assert set(table(passed.stdout).values()) == {"skipped"}
    assert "all checks passed" in passed.stdout
