# Shared by the smoke scripts: a throwaway workspace, the reference server behind the real
# mcporter, and the installed `memfuse` run under a bare, cron-like environment.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MEMFUSE=${MEMFUSE:-$ROOT/.venv/bin/memfuse}
PY=$ROOT/.venv/bin/python
SMOKE_SERVER=${SMOKE_SERVER:-agent-memory}
SMOKE_NAME=$(basename "$0" .sh)
STEP=setup
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() { echo "SMOKE FAIL [$SMOKE_NAME] at step '$STEP': $*" >&2; exit 1; }
step() { STEP=$1; echo "-- $SMOKE_NAME: $STEP"; }

# A copy of the example workspace and an mcporter config for the reference server.
# FAULT_MODE (optional) puts the fault-injecting wrapper in front of it.
make_world() {
    # Only the Markdown: run state left in examples/ by an earlier command must not leak in.
    mkdir -p "$WORK/workspace/memory"
    cp "$ROOT/examples/workspace/MEMORY.md" "$WORK/workspace/"
    cp "$ROOT"/examples/workspace/memory/*.md "$WORK/workspace/memory/"
    mkdir -p "$WORK/home"
    local args='["-m", "memfuse.refserver"]' extra=''
    if [ -n "${FAULT_MODE:-}" ]; then
        args="[\"$ROOT/tests/fault_server.py\"]"
        extra=", \"FAULT_MODE\": \"$FAULT_MODE\", \"FAULT_DELAY\": \"${FAULT_DELAY:-1}\""
        extra+=", \"FAULT_GATE\": \"$WORK/gate\""  # FAULT_MODE=gated: answers once it exists
    fi
    cat > "$WORK/mcporter.json" <<JSON
{"mcpServers": {"agent-memory": {"command": "$PY", "args": $args,
  "env": {"AGENT_MEMORY_DB": "$WORK/agent-memory.db"$extra}}}, "imports": []}
JSON
}

# memfuse as cron runs it: no inherited environment beyond what the crontab sets, and the
# default transport (auto: one session for a stdio server) unless a script pins mcporter.
cron() {
    env -i HOME="$WORK/home" LANG=C.UTF-8 PATH="$(dirname "$MEMFUSE"):/usr/local/bin:/usr/bin:/bin" \
        MEMFUSE_WORKSPACE="$WORK/workspace" \
        MEMFUSE_MCPORTER="${SMOKE_MCPORTER:-node $ROOT/tools/node_modules/mcporter/dist/cli.js}" \
        MEMFUSE_MCPORTER_CONFIG="$WORK/mcporter.json" \
        MEMFUSE_TRANSPORT="${SMOKE_TRANSPORT:-auto}" \
        MEMFUSE_SERVER="$SMOKE_SERVER" \
        "$MEMFUSE" "$@"
}

# Read one value out of a --json envelope: field "data.counts.added".
field() {
    "$PY" -c '
import json, sys
value = json.loads(sys.argv[1])
for key in sys.argv[2].split("."):
    value = value[key]
print(json.dumps(value) if isinstance(value, (dict, list)) else value)
' "$1" "$2" || fail "no field $2 in: ${1:0:300}"
}

expect() {  # expect ACTUAL OP EXPECTED WHAT
    local actual=$1 op=$2 expected=$3 what=$4
    case $op in
        ==) [ "$actual" == "$expected" ] ;;
        -ge|-le|-gt|-lt) [ "$actual" "$op" "$expected" ] ;;
    esac || fail "$what: expected $op $expected, got $actual"
}

# memfuse's state folder for the workspace, as the cron-like runs resolve it.
state_dir() { field "$(cron status --json || true)" data.state; }

checksum() { (cd "$WORK/workspace" && find memory MEMORY.md -type f -name '*.md' | sort | xargs sha256sum); }
