#!/usr/bin/env bash
# Two cron runs at once on one workspace: one works, the other exits 75 (or queues with --wait).
# The first run's store answers wait for a gate the script opens (FAULT_MODE=gated): it holds
# the lock for as long as the script needs, on any machine, however slow.
source "$(dirname "$0")/_lib.bash"
FAULT_MODE=gated make_world

step "start a sync held at the gate"
cron sync --days 1 --now 2026-11-29T14:00 --jobs 1 -q & first=$!
lock="$(state_dir)/lock"
until grep -qs '^pid' "$lock"; do
    kill -0 "$first" 2>/dev/null || fail "the held sync ended without taking the workspace lock"
    sleep 0.1
done

step "an overlapping run exits 75"
set +e
cron surface --now 2026-11-29T14:05 -q 2>"$WORK/err"
code=$?
set -e
expect "$code" == 75 "exit code of the overlapping run"
grep -q "another memfuse run holds" "$WORK/err" || fail "no explanation on stderr"

step "a queued run waits its turn"
cron surface --now 2026-11-29T14:05 --wait 3600 --json > "$WORK/queued" & queued=$!
touch "$WORK/gate"
wait "$first" || fail "the first sync exited $?"
wait "$queued" || fail "queued surface exited $?"
expect "$(field "$(cat "$WORK/queued")" data.source)" == agent-memory "queued surface source"
echo "ok: overlap"
