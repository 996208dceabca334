#!/usr/bin/env bash
# The README's first command as a newcomer meets it (issue 58): it says what it is doing from
# its first line (a first run's setup took ~100 s in silence), and ends with what a person
# does by day — a `memfuse recall` that answers, and a `memfuse note` from the shell that the
# next sync stores (a feeling: an emotion, not an event).
source "$(dirname "$0")/_lib.bash"

step "scripts/demo.sh"
"$ROOT/scripts/demo.sh" > "$WORK/demo.out" 2>&1 || fail "the demo failed: $(tail -n 20 "$WORK/demo.out")"
grep -q "^==> set" <<<"$(head -n 1 "$WORK/demo.out")" \
    || fail "the demo's first line is not about its setup: $(head -n 1 "$WORK/demo.out")"

step "it ends with a recall and a note"
grep -q '^ 1\. \[knowledge\] Mia prefers' <<<"$(grep -A3 '^==> memfuse recall' "$WORK/demo.out")" \
    || fail "recall answered nothing: $(grep -A5 '^==> memfuse recall' "$WORK/demo.out")"
grep -q "^noted at memory/$(date +%F).md:" "$WORK/demo.out" || fail "no note: $(tail -n 6 "$WORK/demo.out")"
grep -q "sync will store it as emotion://journal/" "$WORK/demo.out" \
    || fail "the note's feeling is not an emotion: $(tail -n 6 "$WORK/demo.out")"
grep -q ": 1 added," <<<"$(tail -n 1 "$WORK/demo.out")" || fail "the note was not stored: $(tail -n 2 "$WORK/demo.out")"
echo "ok: demo"
