#!/usr/bin/env bash
# The README's "Use it on your agent" block, run as written — extracted from README.md, not
# copied — in a fresh HOME that already has an mcporter config with another server and a
# crontab of its own: both must survive, memfuse's entry must work, and the installed
# schedule's jobs must run under `env -i` as cron runs them. What is not as on a user's
# machine, and why: `/path/to/memfuse` is this checkout; three programs are stand-ins, put
# first on PATH: `npm` answers E404 for agent-memory's package (as this machine's registry
# does) and is the real npm for everything else; `curl` hands over a source release of a
# stand-in agent-memory (its build makes a server.js that hands its stdio to the bundled
# reference server) where a user's curl fetches the real one; and this machine has no cron,
# so `crontab` is a small program that keeps the table in a file, as crontab(1) does. npm and
# pip are made quiet by their own variables. First the block is run with the release out of
# reach: it must stop at that step, say what to do, and leave nothing half made.
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

# agent-memory's source release, as the stand-in `curl` hands it over: a package whose build
# makes dist/mcp/server.js, a stand-in handing its stdio to the bundled reference server.
RELEASE=$WORK/release/agent-memory-5.1.0
mkdir -p "$RELEASE"
cat > "$RELEASE/package.json" <<'JSON'
{"name": "@smyslenny/agent-memory", "version": "2.2.0", "private": true,
 "scripts": {"build": "mkdir -p dist/mcp && cp server.js dist/mcp/server.js"}}
JSON
cat > "$RELEASE/server.js" <<JS
// Stand-in: the bundled reference server behind agent-memory's path.
const { spawnSync } = require("child_process");
const done = spawnSync("$H/.local/share/memfuse/bin/python", ["-m", "memfuse.refserver"], { stdio: "inherit" });
process.exit(done.status === null ? 1 : done.status);
JS
REAL_NPM=$(command -v npm) || fail "no npm on PATH"
cat > "$H/bin/npm" <<SH
#!/bin/sh
# Stand-in: this machine's registry has no agent-memory package; npm itself for the rest.
case " \$* " in
    *" @smyslenny/agent-memory "*)
        echo "npm error code E404" >&2
        echo "npm error 404 Not Found - GET @smyslenny%2fagent-memory - Not found" >&2
        exit 1 ;;
esac
exec "$REAL_NPM" "\$@"
SH
cat > "$H/bin/curl" <<SH
#!/bin/sh
# Stand-in: agent-memory's source release, or (RELEASE_OUT_OF_REACH) curl -f's 404.
for arg; do url=\$arg; done
case "\$url" in
    */agent-memory/archive/refs/tags/v5.1.0.tar.gz)
        if [ -z "\${RELEASE_OUT_OF_REACH:-}" ]; then
            exec tar -cz -C "$WORK/release" agent-memory-5.1.0
        fi ;;
esac
echo "curl: (22) The requested URL returned error: 404" >&2
exit 22
SH
chmod +x "$H/bin/npm" "$H/bin/curl"
export PATH="$H/bin:$PATH"
unset MEMFUSE_WORKSPACE MEMFUSE_MCPORTER MEMFUSE_MCPORTER_CONFIG MEMFUSE_TRANSPORT
export PIP_QUIET=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false \
    npm_config_loglevel=error npm_config_prefer_offline=true

step "the README's block, extracted"
"$PY" - "$ROOT/README.md" "$ROOT" > "$WORK/readme-steps.sh" <<'PY' || fail "no install block in the README"
import sys
readme, root = open(sys.argv[1]).read(), sys.argv[2]
block = readme.split("<!-- fresh-install:", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
assert block.count("/path/to/memfuse") == 1
print(block.replace("/path/to/memfuse", root))
PY
grep -q "^memfuse cron .* --install$" "$WORK/readme-steps.sh" || fail "the block installs no schedule"

step "the README's block stops where agent-memory cannot be had, and says what to do"
# As a pasted block runs: without errexit, every line runs whatever the one before did.
(
    cd "$HOME"
    RELEASE_OUT_OF_REACH=1 bash "$WORK/readme-steps.sh"
) > "$WORK/readme-stop.out" 2>&1 || true
grep -q "^stopped: agent-memory could not be installed" "$WORK/readme-stop.out" \
    || fail "the block did not stop at agent-memory: $(tail -n 15 "$WORK/readme-stop.out")"
grep -q -- "--server-js PATH" "$WORK/readme-stop.out" \
    || fail "the stop does not show the --server-js route: $(tail -n 15 "$WORK/readme-stop.out")"
grep -q "E404" "$WORK/readme-stop.out" || fail "npm's E404 is not shown"
# The block's closing `memfuse status` must not call a half-made install well (issue 47).
grep -q "nothing needs a person" "$WORK/readme-stop.out" \
    && fail "status says all is well after a failed install step"
grep -q "not set up yet" "$WORK/readme-stop.out" \
    || fail "status does not say the install is unfinished: $(tail -n 5 "$WORK/readme-stop.out")"
[ ! -e "$H/.local/share/agent-memory/src" ] || fail "a half-made agent-memory/src/ is left"
cmp -s <(printf '%s\n' "$USERS_CONFIG") "$H/.mcporter/mcporter.json" \
    || fail "the user's mcporter config changed: step 3 ran after the failed step"
[ -z "$(ls "$H/.mcporter"/*.before-memfuse-* 2>/dev/null)" ] || fail "step 3 ran after the failed step"
cmp -s <(printf 'MAILTO=me@example.invalid\n%s\n' "$USERS_LINE") "$WORK/crontab-table" \
    || fail "the crontab changed: step 4 ran after the failed step"

step "the README's block, run again with the release in reach, line by line"
(
    set -euo pipefail
    cd "$HOME"
    # shellcheck disable=SC1090
    source "$WORK/readme-steps.sh"
) > "$WORK/readme-steps.out" 2>&1 || fail "a README line failed: $(tail -n 15 "$WORK/readme-steps.out")"
M=$H/.local/bin/memfuse
grep -q '^memfuse ' <<<"$("$M" --version)" || fail "the installed command does not run"
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
grep -q "nothing changed" <<<"$again" || fail "a second install changed the crontab: $again"

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
grep -q "FAIL" <<<"$out" || fail "no job reported: $out"
grep -q "node is not on this job's PATH" <<<"$out" || fail "node not named: $out"
grep -q "not used: --" <<<"$out" && fail "the operator's own settings reported: $out"

step "after the stop, the --server-js fix it names, then the block again as pasted: it goes on"
# As a user whose machine reaches neither the package nor the release (issue 58): the block
# stopped at step 2; they build agent-memory by hand where they like, write its entry as the
# stop message says, and run the block again, which used to stop at step 2 again.
kept=("$H/.mcporter/mcporter.json.before-memfuse-"*)  # a glob: no pipe to break
cp "${kept[0]}" "$H/.mcporter/mcporter.json"
"$M" cron --mcporter "$MCPORTER" --mcporter-config "$CFG" -w "$WS" --remove >/dev/null
rm -rf "$H/.local/share/agent-memory"
(
    cd "$HOME"
    RELEASE_OUT_OF_REACH=1 bash "$WORK/readme-steps.sh"
) > "$WORK/readme-stop-again.out" 2>&1 || true
grep -q "then run this block again: it goes on from step 4" "$WORK/readme-stop-again.out" \
    || fail "the stop names no way on: $(tail -n 5 "$WORK/readme-stop-again.out")"
HAND=$H/agent-memory-by-hand
mkdir -p "$HAND"
tar -cz -C "$WORK/release" agent-memory-5.1.0 | tar -xz --strip-components=1 -C "$HAND"
(cd "$HAND" && npm run build >/dev/null) || fail "the by-hand build failed"
"$M" doctor --install-config "$CFG" --server-js "$HAND/dist/mcp/server.js" >/dev/null \
    || fail "the --server-js fix failed"
(
    cd "$HOME"
    RELEASE_OUT_OF_REACH=1 bash "$WORK/readme-steps.sh"
) > "$WORK/readme-rerun.out" 2>&1 || fail "the block run again stopped: $(tail -n 15 "$WORK/readme-rerun.out")"
grep -q "^stopped" "$WORK/readme-rerun.out" && fail "the block run again stopped: $(cat "$WORK/readme-rerun.out")"
grep -q "E404" "$WORK/readme-rerun.out" && fail "the re-run tried agent-memory's package again"
[ ! -e "$H/.local/share/agent-memory" ] || fail "the re-run installed agent-memory again"
expect "$(grep -cE '^[0-9].* (sync|surface|tidy) ' "$WORK/crontab-table")" == 3 "jobs after the re-run"
grep -q "$HAND/dist/mcp/server.js" "$CFG" || fail "the entry is not the one written by hand"
echo "ok: fresh install"
