#!/usr/bin/env bash
# The store is down for a day: nothing is lost, Markdown is untouched, the next day catches up.
# mcporter is the transport here: "down" is a server that dies as it starts, then back. (A
# missing mcporter is the run's own setup, not an outage: exit 78, named, and no alarm.)
export SMOKE_TRANSPORT=${SMOKE_TRANSPORT:-mcporter}
source "$(dirname "$0")/_lib.bash"
make_world
cp "$WORK/mcporter.json" "$WORK/mcporter-up.json"
FAULT_MODE=crash-start make_world
before=$(checksum)

step "a missing mcporter is named as the run's setup, not taken for the store down"
set +e
SMOKE_MCPORTER=/nonexistent/mcporter cron sync --days 7 --now 2026-11-29T13:00 -q 2>"$WORK/err" >/dev/null
code=$?
set -e
expect "$code" == 78 "exit code of a run with a missing mcporter"
grep -q "its setup is why: mcporter: mcporter not found" "$WORK/err" \
    || fail "the cause is not named: $(cat "$WORK/err")"

step "sync with the store down"
out=$(cron sync --days 7 --now 2026-11-29T14:00 --json 2>"$WORK/err") \
    || fail "sync must exit 0 when the store is down, got $?"
expect "$(field "$out" status)" == degraded "status"
expect "$(field "$out" data.counts.failed)" == 35 "failed bullets"
grep -q "^warning: " "$WORK/err" || fail "no warning on stderr"

step "sync --strict signals the failure to a pipeline"
set +e
cron sync --days 7 --now 2026-11-29T14:00 --strict -q 2>/dev/null
code=$?
set -e
expect "$code" == 3 "--strict exit code"

step "the third run in a row with the store down needs a person: exit 4, one line for cron"
set +e
quiet=$(cron sync --days 7 --now 2026-11-29T14:30 -q 2>"$WORK/err")
code=$?
set -e
expect "$code" == 4 "escalation exit code"
[ -z "$quiet" ] || fail "-q printed on stdout: $quiet"
expect "$(wc -l < "$WORK/err")" == 1 "lines on stderr"
grep -q "every store call failed in the last 3 runs, since 2026-11-29 14:00" "$WORK/err" \
    || fail "no since-when line: $(cat "$WORK/err")"
set +e
cron status -q --now 2026-11-29T14:31 >/dev/null 2>&1
code=$?
set -e
expect "$code" == 4 "memfuse status -q as a monitoring probe"

step "surface falls back to the journals"
out=$(cron surface --now 2026-11-29T14:05 --json 2>/dev/null) \
    || fail "surface exited $?"
expect "$(field "$out" data.source)" == journals "surface source"
expect "$(field "$out" data.sections.event)" -gt 0 "event entries from journals"

step "the Markdown is untouched"
[ "$(checksum)" == "$before" ] || fail "journals or MEMORY.md changed"

step "the store is back: everything is synced"
cp "$WORK/mcporter-up.json" "$WORK/mcporter.json"
out=$(cron sync --days 7 --now 2026-11-29T22:00 --json) || fail "sync exited $?"
expect "$(field "$out" data.counts.added)" == 35 "bullets caught up"
echo "ok: store down"
