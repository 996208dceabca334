#!/usr/bin/env bash
# The README's "Use it on your agent" steps on a fresh venv and a fresh HOME, then the crontab
# `memfuse cron` prints, run line by line under `env -i` as cron would. The bundled reference
# server stands in for agent-memory (step 2's second npm install is the only step not run).
source "$(dirname "$0")/_lib.bash"
make_world
H=$WORK/home
export HOME=$H
today=$(date +%F)
printf -- '- Met Bob about the staging deploy for the billing service\n- Remember: Alice prefers the release notes in English\n' \
    > "$WORK/workspace/memory/$today.md"

step "1. memfuse into its own venv from the checkout"
python3 -m venv "$H/.local/share/memfuse"
"$H/.local/share/memfuse/bin/pip" install --quiet --disable-pip-version-check "$ROOT[session]" \
    || fail "pip install of the checkout failed"
mkdir -p "$H/.local/bin" && ln -sf "$H/.local/share/memfuse/bin/memfuse" "$H/.local/bin/memfuse"
M=$H/.local/bin/memfuse
"$M" --version | grep -q '^memfuse ' || fail "the installed command does not run"

step "2. mcporter with npm"
npm_config_update_notifier=false npm install --prefix "$H/.local/share/mcporter" --no-audit --no-fund --loglevel=error \
    --prefer-offline mcporter@0.12.3 >/dev/null || fail "npm install mcporter failed"
MCPORTER=$H/.local/share/mcporter/node_modules/.bin/mcporter
[ -x "$MCPORTER" ] || fail "no mcporter at $MCPORTER"

step "3. the mcporter config memfuse prints, pointed at the reference server"
mkdir -p "$H/.mcporter"
"$M" doctor --print-config -w "$WORK/workspace" > "$H/.mcporter/printed.json" 2>/dev/null
VENV_PY=$H/.local/share/memfuse/bin/python
"$VENV_PY" - "$H/.mcporter/printed.json" "$H/.mcporter/mcporter.json" "$VENV_PY" "$WORK/agent-memory.db" <<'PY' \
    || fail "doctor --print-config gave no usable mcporter config"
import json, sys
printed, target, python, db = sys.argv[1:]
config = json.load(open(printed))
entry = config["mcpServers"]["agent-memory"]
assert entry["env"]["AGENT_MEMORY_AUTO_INGEST"] == "0", entry
assert entry["args"][0].endswith("@smyslenny/agent-memory/dist/mcp/server.js"), entry
entry.update(command=python, args=["-m", "memfuse.refserver"])  # the stand-in for agent-memory
entry["env"]["AGENT_MEMORY_DB"] = db
json.dump(config, open(target, "w"))
PY
CFG=$H/.mcporter/mcporter.json

step "4. doctor, cron, cron --check"
out=$("$M" doctor --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WORK/workspace" --json) \
    || fail "doctor exited $?: $(field "$out" data.error)"
"$M" cron --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WORK/workspace" > "$WORK/memfuse.cron"
grep -q ">>\|2>&1" "$WORK/memfuse.cron" && fail "the crontab redirects output away from cron's mail"
grep -q -- "--archive" "$WORK/memfuse.cron" && fail "--archive without asking for it"
out=$("$M" cron --check "$WORK/memfuse.cron" -w "$WORK/workspace") || fail "cron --check failed: $out"

step "each crontab line under env -i, as cron runs it"
cron_path=$(sed -n 's/^PATH=//p' "$WORK/memfuse.cron")
while IFS= read -r line; do
    command=$(printf '%s\n' "$line" | cut -d' ' -f6- | sed 's/\\%/%/g')
    set +e
    printed=$(cd / && env -i HOME="$H" LOGNAME=cron SHELL=/bin/sh PATH="$cron_path" /bin/sh -c "$command" 2>&1)
    code=$?
    set -e
    expect "$code" == 0 "exit code of: $command"
    [ -z "$printed" ] || fail "a quiet cron line printed (cron would mail it): $printed"
done < <(grep -E '^[0-9]' "$WORK/memfuse.cron")
out=$("$M" status -w "$WORK/workspace" --json) || fail "status exited $? after good runs"
expect "$(field "$out" data.commands.sync.last_run.counts.added)" == 2 "bullets synced by cron's line"
expect "$(field "$out" data.commands.sync.last_run.store)" == ok "store reached from cron's line"
[ -s "$WORK/workspace/RECENT.md" ] || fail "surface's line wrote no RECENT.md"

state=$(field "$("$M" status -w "$WORK/workspace" --json || true)" data.state)
grep -q "transport session (auto: agent-memory is a stdio server" "$state/memfuse.log" \
    || fail "the default transport did not pick the session for a stdio server"

step "cron --check catches a PATH without node (mcporter is a node program)"
"$M" cron --transport mcporter --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WORK/workspace" \
    | sed "s|^PATH=.*|PATH=$H/.local/bin|" > "$WORK/no-node.cron"
grep -q -- "--transport mcporter" "$WORK/no-node.cron" || fail "memfuse cron dropped --transport"
set +e
out=$("$M" cron --check "$WORK/no-node.cron" -w "$WORK/workspace" 2>&1)
code=$?
set -e
expect "$code" == 1 "cron --check exit code"
echo "$out" | grep -q "FAIL" || fail "no line reported: $out"
echo "$out" | grep -q "node is not on this crontab's PATH" || fail "node not named: $out"
echo "ok: fresh install"
