#!/usr/bin/env bash
# The README's "Use it on your agent", line by line, on a fresh venv and a fresh HOME that
# already has an mcporter config with another server and a crontab of its own: both must
# survive, memfuse's entry must work, and the installed schedule's jobs must run under
# `env -i` as cron runs them. Two stand-ins, both said here: agent-memory's npm package is a
# server.js that hands its stdio to the bundled reference server (step 2's second npm install
# is the one step not run), and this machine has no cron, so `crontab` is a small program that
# keeps the table in a file, as crontab(1) does.
source "$(dirname "$0")/_lib.bash"
make_world
H=$WORK/home
export HOME=$H
today=$(date +%F)
printf -- '- Met Bob about the staging deploy for the billing service\n- Remember: Alice prefers the release notes in English\n' \
    > "$WORK/workspace/memory/$today.md"

# What the user already has.
mkdir -p "$H/.mcporter" "$H/bin" "$H/.openclaw"
USERS_CONFIG='{"mcpServers": {"github": {"command": "/usr/bin/true", "args": ["--stdio"]}}, "imports": ["cursor"]}'
printf '%s\n' "$USERS_CONFIG" > "$H/.mcporter/mcporter.json"
USERS_LINE="30 1 * * * /usr/bin/backup --all"
printf 'MAILTO=me@example.invalid\n%s\n' "$USERS_LINE" > "$WORK/crontab-table"
cat > "$H/bin/crontab" <<SH
#!/bin/sh
if [ "\$1" = -l ]; then
    [ -s "$WORK/crontab-table" ] || { echo "no crontab for \$(id -un)" >&2; exit 1; }
    exec cat "$WORK/crontab-table"
fi
[ "\$1" = - ] || { echo "usage: crontab -l | crontab -" >&2; exit 1; }
cat > "$WORK/crontab-table.new" && mv "$WORK/crontab-table.new" "$WORK/crontab-table"
SH
chmod +x "$H/bin/crontab"
export PATH="$H/bin:$PATH"

step "1. memfuse into its own venv from the checkout"
python3 -m venv "$H/.local/share/memfuse"
"$H/.local/share/memfuse/bin/pip" install --quiet --disable-pip-version-check "$ROOT[session]" \
    || fail "pip install of the checkout failed"
mkdir -p "$H/.local/bin" && ln -sf "$H/.local/share/memfuse/bin/memfuse" "$H/.local/bin/memfuse"
M=$H/.local/bin/memfuse
"$M" --version | grep -q '^memfuse ' || fail "the installed command does not run"

step "2. mcporter with npm; agent-memory's stand-in where npm would put it"
npm_config_update_notifier=false npm install --prefix "$H/.local/share/mcporter" --no-audit --no-fund --loglevel=error \
    --prefer-offline mcporter@0.12.3 >/dev/null || fail "npm install mcporter failed"
MCPORTER=$H/.local/share/mcporter/node_modules/.bin/mcporter
[ -x "$MCPORTER" ] || fail "no mcporter at $MCPORTER"
PKG=$H/.local/share/agent-memory/node_modules/@smyslenny/agent-memory
mkdir -p "$PKG/dist/mcp"
echo '{"name": "@smyslenny/agent-memory", "version": "2.2.0"}' > "$PKG/package.json"
cat > "$PKG/dist/mcp/server.js" <<JS
// Stand-in: the bundled reference server behind agent-memory's path.
const { spawnSync } = require("child_process");
const done = spawnSync("$H/.local/share/memfuse/bin/python", ["-m", "memfuse.refserver"], { stdio: "inherit" });
process.exit(done.status === null ? 1 : done.status);
JS

step "3. doctor --install-config: the entry beside the user's server"
out=$("$M" doctor --install-config "$H/.mcporter/mcporter.json" -w "$WORK/workspace" --json) \
    || fail "doctor --install-config exited $?: $out"
"$H/.local/share/memfuse/bin/python" - "$H/.mcporter/mcporter.json" "$USERS_CONFIG" "$PKG" <<'PY' \
    || fail "the user's mcporter config did not survive the install"
import json, sys
path, before, package = sys.argv[1:]
config, before = json.load(open(path)), json.loads(before)
assert config["mcpServers"]["github"] == before["mcpServers"]["github"], config
assert config["imports"] == ["cursor"], config
entry = config["mcpServers"]["agent-memory"]
assert entry["args"] == [package + "/dist/mcp/server.js"], entry
assert entry["env"]["AGENT_MEMORY_AUTO_INGEST"] == "0", entry
PY
backup=$(field "$out" data.backup)
cmp -s <(printf '%s\n' "$USERS_CONFIG") "$backup" || fail "no exact copy of the config as it was"

step "4. doctor, cron --check, cron --install"
CFG=$H/.mcporter/mcporter.json
out=$("$M" doctor --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WORK/workspace" --json) \
    || fail "doctor exited $?: $(field "$out" data.error)"
out=$("$M" cron --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WORK/workspace" --check) \
    || fail "cron --check failed: $out"
out=$("$M" cron --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WORK/workspace" --install) \
    || fail "cron --install failed: $out"
grep -qxF "$USERS_LINE" "$WORK/crontab-table" || fail "the user's crontab line is gone"
grep -qxF "MAILTO=me@example.invalid" "$WORK/crontab-table" || fail "the user's MAILTO is gone"
grep -q ">>\|2>&1" <(grep -E '^[0-9]' "$WORK/crontab-table" | grep memfuse) \
    && fail "the schedule redirects output away from cron's mail"
grep -q -- "--archive" "$WORK/crontab-table" && fail "--archive without asking for it"
again=$("$M" cron --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WORK/workspace" --install)
echo "$again" | grep -q "nothing changed" || fail "a second install changed the crontab: $again"

step "each installed memfuse job under env -i, as cron runs it"
cron_path=$(sed -n 's/^PATH=//p' "$WORK/crontab-table")
jobs=0
while IFS= read -r line; do
    command=$(printf '%s\n' "$line" | cut -d' ' -f6- | sed 's/\\%/%/g')
    set +e
    printed=$(cd / && env -i HOME="$H" LOGNAME=cron SHELL=/bin/sh PATH="$cron_path" /bin/sh -c "$command" 2>&1)
    code=$?
    set -e
    expect "$code" == 0 "exit code of: $command"
    [ -z "$printed" ] || fail "a quiet cron line printed (cron would mail it): $printed"
    jobs=$((jobs + 1))
done < <(grep -E '^[0-9].* (sync|surface|tidy) ' "$WORK/crontab-table")
expect "$jobs" == 3 "memfuse jobs in the crontab"
out=$("$M" status -w "$WORK/workspace" --json) || fail "status exited $? after good runs"
# A first plain sync reads every journal: the example week's 35 bullets and today's 2.
expect "$(field "$out" data.commands.sync.last_run.counts.added)" == 37 "bullets synced by cron's line"
expect "$(field "$out" data.commands.sync.last_run.store)" == ok "store reached from cron's line"
[ -s "$WORK/workspace/RECENT.md" ] || fail "surface's line wrote no RECENT.md"

state=$(field "$("$M" status -w "$WORK/workspace" --json || true)" data.state)
grep -q "transport session (auto: agent-memory is a stdio server" "$state/memfuse.log" \
    || fail "the default transport did not pick the session for a stdio server"

step "cron --remove leaves the user's crontab as it was"
"$M" cron --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WORK/workspace" --remove >/dev/null \
    || fail "cron --remove failed"
cmp -s <(printf 'MAILTO=me@example.invalid\n%s\n' "$USERS_LINE") "$WORK/crontab-table" \
    || fail "after --remove the crontab differs from the user's: $(cat "$WORK/crontab-table")"

step "cron --check catches a PATH without node (mcporter is a node program)"
"$M" cron --transport mcporter --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WORK/workspace" \
    | sed "s|^PATH=.*|PATH=$H/.local/bin|" > "$WORK/no-node.cron"
grep -q -- "--transport mcporter" "$WORK/no-node.cron" || fail "memfuse cron dropped --transport"
set +e
# The check runs with the operator's own settings: named as the schedule names them, they are
# no finding, and the one left is the PATH.
out=$("$M" cron --check "$WORK/no-node.cron" --transport mcporter --mcporter "$MCPORTER" \
    --mcporter-config "$CFG" -w "$WORK/workspace" 2>&1)
code=$?
set -e
expect "$code" == 1 "cron --check exit code"
echo "$out" | grep -q "FAIL" || fail "no job reported: $out"
echo "$out" | grep -q "node is not on this job's PATH" || fail "node not named: $out"
echo "$out" | grep -q "not used: --" && fail "the operator's own settings reported: $out"
echo "ok: fresh install"
