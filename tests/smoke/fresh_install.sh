#!/usr/bin/env bash
# The README's "Use it on your agent" block, run as written — extracted from README.md, not
# copied — in a fresh HOME that already has an mcporter config with another server and a
# crontab of its own: both must survive, memfuse's entry must work, and the installed
# schedule's jobs must run under `env -i` as cron runs them. What is not run as written, and
# why: `/path/to/memfuse` is this checkout; agent-memory's statement (its npm package is not in
# this machine's registry, and its source release cannot be fetched here) becomes a stand-in
# server.js, where the README's source build puts it, that hands its stdio to the bundled
# reference server; and this machine has no cron, so `crontab` is a small program that keeps
# the table in a file, as crontab(1) does. npm and pip are made quiet by their own variables.
source "$(dirname "$0")/_lib.bash"
make_world
H=$WORK/home
export HOME=$H
WS=$H/.openclaw/workspace
mkdir -p "$WS"
cp -r "$WORK/workspace/." "$WS/"
today=$(date +%F)
printf -- '- Met Bob about the staging deploy for the billing service\n- Remember: Alice prefers the release notes in English\n' \
    > "$WS/memory/$today.md"

# What the user already has.
mkdir -p "$H/.mcporter" "$H/bin"
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
unset MEMFUSE_WORKSPACE MEMFUSE_MCPORTER MEMFUSE_MCPORTER_CONFIG MEMFUSE_TRANSPORT
export PIP_QUIET=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false \
    npm_config_loglevel=error npm_config_prefer_offline=true

step "the README's block, extracted"
"$PY" - "$ROOT/README.md" "$ROOT" > "$WORK/readme-steps.sh" <<'PY' || fail "no install block in the README"
import re, sys
readme, root = open(sys.argv[1]).read(), sys.argv[2]
block = readme.split("<!-- fresh-install:", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
standin = "install_agent_memory_standin  # the README's agent-memory statement, not runnable here"
block, n = re.subn(
    r"^npm install [^\n]*@smyslenny/agent-memory \|\| \{\n(?:.*\n)*?.*; \}$", standin, block,
    flags=re.M,
)
assert n == 1, "the agent-memory statement changed shape: update the stand-in"
assert block.count("/path/to/memfuse") == 1
print(block.replace("/path/to/memfuse", root))
PY
grep -q "^memfuse cron .* --install$" "$WORK/readme-steps.sh" || fail "the block installs no schedule"

install_agent_memory_standin() {
    local src=$HOME/.local/share/agent-memory/src
    mkdir -p "$src/dist/mcp"
    echo '{"name": "@smyslenny/agent-memory", "version": "2.2.0"}' > "$src/package.json"
    cat > "$src/dist/mcp/server.js" <<JS
// Stand-in: the bundled reference server behind agent-memory's path.
const { spawnSync } = require("child_process");
const done = spawnSync("$HOME/.local/share/memfuse/bin/python", ["-m", "memfuse.refserver"], { stdio: "inherit" });
process.exit(done.status === null ? 1 : done.status);
JS
}

step "the README's block, line by line, in a fresh HOME"
(
    set -euo pipefail
    cd "$HOME"
    # shellcheck disable=SC1090
    source "$WORK/readme-steps.sh"
) > "$WORK/readme-steps.out" 2>&1 || fail "a README line failed: $(tail -n 15 "$WORK/readme-steps.out")"
M=$H/.local/bin/memfuse
"$M" --version | grep -q '^memfuse ' || fail "the installed command does not run"
grep -q "built from its source" "$WORK/readme-steps.out" || fail "doctor did not say which agent-memory"
[ -d "$H/.openclaw" ] || fail "no folder for the store's database"

"$H/.local/share/memfuse/bin/python" - "$H/.mcporter/mcporter.json" "$USERS_CONFIG" \
    "$H/.local/share/agent-memory/src" <<'PY' || fail "the user's mcporter config did not survive the install"
import json, sys
path, before, package = sys.argv[1:]
config, before = json.loads(open(path).read()), json.loads(before)
assert config["mcpServers"]["github"] == before["mcpServers"]["github"], config
assert config["imports"] == ["cursor"], config
entry = config["mcpServers"]["agent-memory"]
assert entry["args"] == [package + "/dist/mcp/server.js"], entry
assert entry["env"]["AGENT_MEMORY_AUTO_INGEST"] == "0", entry
PY
ls "$H/.mcporter/mcporter.json.before-memfuse-"* >/dev/null 2>&1 || fail "no copy of the config as it was"
grep -qxF "$USERS_LINE" "$WORK/crontab-table" || fail "the user's crontab line is gone"
grep -qxF "MAILTO=me@example.invalid" "$WORK/crontab-table" || fail "the user's MAILTO is gone"
grep -q ">>\|2>&1" <(grep -E '^[0-9]' "$WORK/crontab-table" | grep memfuse) \
    && fail "the schedule redirects output away from cron's mail"
grep -q -- "--archive" "$WORK/crontab-table" && fail "--archive without asking for it"
grep -q -- "--workspace $WS " "$WORK/crontab-table" || fail "the jobs do not name the workspace"
MCPORTER=$H/.local/share/mcporter/node_modules/.bin/mcporter
CFG=$H/.mcporter/mcporter.json
again=$("$M" cron -w "$WS" --mcporter "$MCPORTER" --mcporter-config "$CFG" --install)
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
out=$("$M" status -w "$WS" --json) || fail "status exited $? after good runs"
# A first plain sync reads every journal: the example week's 35 bullets and today's 2.
expect "$(field "$out" data.commands.sync.last_run.counts.added)" == 37 "bullets synced by cron's line"
expect "$(field "$out" data.commands.sync.last_run.store)" == ok "store reached from cron's line"
[ -s "$WS/RECENT.md" ] || fail "surface's line wrote no RECENT.md"

state=$(field "$("$M" status -w "$WS" --json || true)" data.state)
grep -q "transport session (auto: agent-memory is a stdio server" "$state/memfuse.log" \
    || fail "the default transport did not pick the session for a stdio server"

step "cron --remove leaves the user's crontab as it was"
"$M" cron --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WS" --remove >/dev/null \
    || fail "cron --remove failed"
cmp -s <(printf 'MAILTO=me@example.invalid\n%s\n' "$USERS_LINE") "$WORK/crontab-table" \
    || fail "after --remove the crontab differs from the user's: $(cat "$WORK/crontab-table")"

step "cron --check catches a PATH without node (mcporter is a node program)"
"$M" cron --transport mcporter --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WS" \
    | sed "s|^PATH=.*|PATH=$H/.local/bin|" > "$WORK/no-node.cron"
grep -q -- "--transport mcporter" "$WORK/no-node.cron" || fail "memfuse cron dropped --transport"
set +e
# The check runs with the operator's own settings: named as the schedule names them, they are
# no finding, and the one left is the PATH.
out=$("$M" cron --check "$WORK/no-node.cron" --transport mcporter --mcporter "$MCPORTER" \
    --mcporter-config "$CFG" -w "$WS" 2>&1)
code=$?
set -e
expect "$code" == 1 "cron --check exit code"
echo "$out" | grep -q "FAIL" || fail "no job reported: $out"
echo "$out" | grep -q "node is not on this job's PATH" || fail "node not named: $out"
echo "$out" | grep -q "not used: --" && fail "the operator's own settings reported: $out"
echo "ok: fresh install"
