#!/usr/bin/env bash
# One normal day as cron runs it: 14:00 sync, 14:05 surface, 22:00 sync, 03:00 tidy.
source "$(dirname "$0")/_lib.bash"
make_world
NOW=2026-11-29T14:00

step "doctor"
out=$(cron doctor --json) || fail "doctor exited $?: $(field "$out" data.error)"

step "sync 14:00 (backfill of the week)"
out=$(cron sync --days 7 --now $NOW --json) || fail "sync exited $?"
expect "$(field "$out" status)" == ok "sync status"
expect "$(field "$out" data.counts.added)" == 35 "memories added"
expect "$(field "$out" data.counts.failed)" == 0 "failed calls"

step "sync again: nothing new"
out=$(cron sync --days 7 --now $NOW --json) || fail "re-sync exited $?"
expect "$(field "$out" data.calls)" == 1 "MCP calls on a re-sync (the status probe)"
expect "$(field "$out" data.counts.unchanged)" == 35 "unchanged bullets"

step "surface 14:05"
out=$(cron surface --now 2026-11-29T14:05 --json) || fail "surface exited $?"
expect "$(field "$out" data.source)" == agent-memory "surface source"
for section in emotion knowledge event; do
    expect "$(field "$out" data.sections.$section)" -gt 0 "$section entries"
done
lines=$(wc -l < "$WORK/workspace/RECENT.md")
expect "$lines" -le 80 "RECENT.md lines"
grep -q '^_auto-updated: 2026-11-29 14:05_$' <<<"$(head -3 "$WORK/workspace/RECENT.md")" || fail "timestamp line missing"

step "sync 22:00 after the agent appended a bullet"
echo "- Late note: the payments dry run is booked for Friday" >> "$WORK/workspace/memory/2026-11-29.md"
out=$(cron sync --now 2026-11-29T22:00 --json) || fail "sync exited $?"
expect "$(field "$out" data.counts.added)" == 1 "new bullet added"
expect "$(field "$out" data.calls)" == 2 "calls for one new bullet (and the probe)"

step "tidy 03:00, quiet as in the crontab"
quiet=$(cron tidy -q --now 2026-11-30T03:00) || fail "tidy exited $?"
[ -z "$quiet" ] || fail "-q printed on success: $quiet"
out=$(cron tidy --now 2026-11-30T03:00 --json) || fail "tidy --json exited $?"
[ "$(field "$out" data.reflect)" != "None" ] || fail "reflect gave no counts"
[ -f "$WORK/workspace/memory/archive/MEMORY.md.bak-2026-11-30" ] || fail "no MEMORY.md backup"
grep -q "end tidy status=ok" "$(state_dir)/memfuse.log" || fail "tidy not in the log"
[ ! -e "$WORK/workspace/.memfuse" ] || fail "memfuse wrote its state into the workspace"
echo "ok: normal day"
