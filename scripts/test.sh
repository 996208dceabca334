#!/usr/bin/env bash
# Set up, then run every check CI runs: lint, format, types, the test suite, the smoke scripts
# and the demo. Every stage runs even when an earlier one failed; a table of each stage's
# result and time closes the output, and the exit is non-zero if any stage failed. Each
# stage's log stays in .test-logs/ (gitignored; the smoke scripts' and the demo's too).
# pytest runs on every core (pytest-xdist; no test depends on another's state), and the
# smoke scripts run beside it: most of both is waiting on child processes, not computing.
#
# Knobs (tests/unit/test_test_sh.py uses them): MEMFUSE_TEST_STAGES="ruff mypy ..." runs only
# those stages (default: all of `stages` below); MEMFUSE_TEST_FAIL="ruff ..." fails those
# stages at once instead of running them (how the stage logic itself is tested);
# MEMFUSE_TEST_LOGS names another folder for the logs.
set -uo pipefail
cd "$(dirname "$0")/.."

stages=(setup ruff format mypy unit integration smoke demo)
[ $# -gt 0 ] && stages=(setup ruff format mypy pytest smoke demo)
selected=" ${MEMFUSE_TEST_STAGES:-${stages[*]}} "
selected=${selected//,/ }
forced=" ${MEMFUSE_TEST_FAIL:-} "
forced=${forced//,/ }
logs=${MEMFUSE_TEST_LOGS:-.test-logs}
mkdir -p "$logs"
rm -rf "$logs"/*.log "$logs/smoke" # this script's own, from the run before
mkdir -p "$logs/smoke"

declare -A result seconds
wanted() { [[ "$selected" == *" $1 "* ]]; }

# stage NAME COMMAND...: run it (tee'd into .test-logs/NAME.log), record its result and time.
stage() {
    local name=$1 started=$SECONDS status=0
    shift
    wanted "$name" || return 0
    echo "==> $name: $*"
    if [[ "$forced" == *" $name "* ]]; then
        echo "forced to fail by MEMFUSE_TEST_FAIL" | tee "$logs/$name.log"
        status=1
    else
        "$@" 2>&1 | tee "$logs/$name.log"
        status=${PIPESTATUS[0]}
    fi
    seconds[$name]=$((SECONDS - started))
    result[$name]=$([ "$status" = 0 ] && echo passed || echo "FAILED ($status)")
}

summary() {
    echo
    echo "==> summary (logs in $logs/)"
    printf '%-12s %-14s %s\n' stage result seconds
    local name failed=0
    for name in "${stages[@]}"; do
        if [ -z "${result[$name]:-}" ]; then
            printf '%-12s %-14s %s\n' "$name" skipped -
            continue
        fi
        printf '%-12s %-14s %s\n' "$name" "${result[$name]}" "${seconds[$name]}"
        [ "${result[$name]}" = passed ] || failed=1
    done
    if [ "$failed" = 0 ]; then
        echo "==> all checks passed"
    else
        echo "==> some checks failed (above)" >&2
    fi
    return "$failed"
}

stage setup scripts/setup.sh
if [[ "${result[setup]:-passed}" != passed ]]; then
    summary
    exit 1 # nothing else can run without the venv and mcporter
fi
export PATH="$PWD/.venv/bin:$PATH"
# Every example of every property (a developer's own `pytest tests/unit` tries a quarter):
# tests/conftest.py, docs/decisions.md 550.
export MEMFUSE_TEST_THOROUGH=1

stage ruff ruff check src tests benchmarks
stage format ruff format --check src tests benchmarks
stage mypy mypy --strict src

# The smoke scripts run beside pytest, in their own process group (stopped if this script
# is interrupted); each one's log is kept in .test-logs/smoke/.
smoke_pid=
trap '[ -n "$smoke_pid" ] && kill -- "-$smoke_pid" 2>/dev/null' EXIT
smoke_started=$SECONDS
if wanted smoke && [[ "$forced" != *" smoke "* ]]; then
    setsid bash -c '
        for script in tests/smoke/*.sh; do
            log="$1/$(basename "$script" .sh).log"
            bash "$script" > "$log" 2>&1 || echo "$script" >> "$1/failed"
        done' smoke "$logs/smoke" &
    smoke_pid=$!
fi

workers=(-n "${MEMFUSE_TEST_WORKERS:-auto}")
# The integration tier waits a good part of its time (injected hangs, timeouts, a held lock):
# one worker more than there are cores keeps them busy.
integration_workers=(-n "${MEMFUSE_TEST_WORKERS:-$(($(nproc) + 1))}")
if [ $# -gt 0 ]; then
    stage pytest pytest "${workers[@]}" "$@"
else
    stage unit pytest "${workers[@]}" tests/unit --cov --cov-report=term --cov-fail-under=85
    stage integration pytest "${integration_workers[@]}" tests/integration
fi

# Waited for here, not inside the stage: the stage's command runs in a pipe's subshell.
[ -n "$smoke_pid" ] && wait "$smoke_pid"
smoke_pid=
smoke_report() {
    local log
    for log in "$logs"/smoke/*.log; do
        echo "==> smoke: tests/smoke/$(basename "$log" .log).sh (log: $log)"
        cat "$log"
    done
    if [ -s "$logs/smoke/failed" ]; then
        echo "==> smoke scripts failed: $(tr '\n' ' ' < "$logs/smoke/failed")" >&2
        return 1
    fi
}
stage smoke smoke_report
[ -n "${seconds[smoke]:-}" ] && seconds[smoke]=$((SECONDS - smoke_started)) # beside pytest

# The README's first command, as a user runs it: every time, not most times (CI: 10 in a row).
demo() {
    local runs=$1 n
    for n in $(seq 1 "$runs"); do
        echo "==> scripts/demo.sh, run $n of $runs (log: $logs/demo-$n.log)"
        if ! scripts/demo.sh > "$logs/demo-$n.log" 2>&1; then
            cat "$logs/demo-$n.log"
            echo "==> scripts/demo.sh failed on run $n of $runs" >&2
            return 1
        fi
    done
}
stage demo demo "${MEMFUSE_DEMO_RUNS:-$([ "${CI:-}" = true ] && echo 10 || echo 1)}"

summary
