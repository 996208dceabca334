#!/usr/bin/env bash
# Two cron runs at once on one workspace: one works, the other exits 75 (or queues with --wait).
source "$(dirname "$0")/_lib.bash"
FAULT_MODE=slow FAULT_DELAY=0.5 make_world

step "start a slow sync"
cron sync --days 1 --now 2026-11-29T14:00 --jobs 1 -q & first=$!  # 5 bullets, ~1 s each
took=
lock="$(state_dir)/lock"
for _ in $(seq 300); do grep -qs '^pid' "$lock" && { took=1; break; }; sleep 0.1; done
[ -n "$took" ] || fail "the slow sync never took the workspace lock within 30 s"

step "an overlapping run exits 75"
set +e
cron surface --now 2026-11-29T14:05 -q 2>"$WORK/err"
code=$?
set -e
expect "$code" == 75 "exit code of the overlapping run"
grep -q "another memfuse run holds" "$WORK/err" || fail "no explanation on stderr"

step "a queued run waits its turn"
out=$(cron surface --now 2026-11-29T14:05 --wait 120 --json) || fail "queued surface exited $?"
kill -0 "$first" 2>/dev/null && fail "the queued run did not wait for the first"
wait "$first" || fail "the first sync exited $?"
expect "$(field "$out" data.source)" == agent-memory "queued surface source"
echo "ok: overlap"
