#!/usr/bin/env bash
# Set up, then run every check CI runs: lint, format, types, the test suite, the smoke scripts.
# pytest runs on every core (pytest-xdist; no test depends on another's state), and the
# smoke scripts run beside it: most of both is waiting on child processes, not computing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
# Every example of every property (a developer's own `pytest tests/unit` tries a quarter):
# tests/conftest.py, docs/decisions.md 550.
export MEMFUSE_TEST_THOROUGH=1

echo "==> ruff check";          ruff check src tests benchmarks
echo "==> ruff format --check"; ruff format --check src tests benchmarks
echo "==> mypy --strict src";   mypy --strict src

smoke_logs=$(mktemp -d)
smoke_pid=
# The smoke scripts run in their own process group, so a failing pytest stops them all.
trap '[ -n "$smoke_pid" ] && kill -- "-$smoke_pid" 2>/dev/null; rm -rf "$smoke_logs"' EXIT
if compgen -G "tests/smoke/*.sh" > /dev/null; then
    setsid bash -c '
        for script in tests/smoke/*.sh; do
            log="$1/$(basename "$script" .sh).log"
            bash "$script" > "$log" 2>&1 || echo "$script" >> "$1/failed"
        done' smoke "$smoke_logs" &
    smoke_pid=$!
fi

workers=(-n "${MEMFUSE_TEST_WORKERS:-auto}")
# The integration tier waits a good part of its time (injected hangs, timeouts, a held lock):
# one worker more than there are cores keeps them busy.
integration_workers=(-n "${MEMFUSE_TEST_WORKERS:-$(( $(nproc) + 1 ))}")
if [ $# -gt 0 ]; then
    echo "==> pytest $* (and the smoke scripts beside it)"
    pytest "${workers[@]}" "$@"
else
    echo "==> pytest tests/unit: in-process, with the coverage gate (the smoke scripts run beside it)"
    pytest "${workers[@]}" tests/unit --cov --cov-report=term --cov-fail-under=85
    echo "==> pytest tests/integration: the real mcporter and real servers"
    pytest "${integration_workers[@]}" tests/integration
fi

if [ -n "$smoke_pid" ]; then
    wait "$smoke_pid"
    smoke_pid=
    for log in "$smoke_logs"/*.log; do
        echo "==> smoke: tests/smoke/$(basename "$log" .log).sh"
        cat "$log"
    done
    if [ -s "$smoke_logs/failed" ]; then
        echo "==> smoke scripts failed: $(tr '\n' ' ' < "$smoke_logs/failed")" >&2
        exit 1
    fi
fi
# The README's first command, as a user runs it: every time, not most times (CI: 10 in a row).
demo_runs=${MEMFUSE_DEMO_RUNS:-$([ "${CI:-}" = true ] && echo 10 || echo 1)}
for n in $(seq 1 "$demo_runs"); do
    echo "==> scripts/demo.sh, run $n of $demo_runs"
    if ! scripts/demo.sh > "$smoke_logs/demo.log" 2>&1; then
        cat "$smoke_logs/demo.log"
        echo "==> scripts/demo.sh failed on run $n of $demo_runs" >&2
        exit 1
    fi
done
echo "==> all checks passed"
