#!/usr/bin/env bash
# The embedded default, end to end: set up, copy the example workspace into demo/ (its week of
# journals re-dated to end today), start nothing by hand — memfuse starts the bundled
# reference server (one MCP session per run: `--transport auto`) — then run the nightly
# lifecycle, show RECENT.md, and what a person does by day: a recall, and a note.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p demo
if [ -x .venv/bin/memfuse ] && [ -f tools/node_modules/mcporter/dist/cli.js ]; then
    echo "==> set up already (.venv/, tools/node_modules/): skipped; scripts/setup.sh redoes it"
else
    # A first run installs memfuse and mcporter (a minute or two): its steps as they start.
    echo "==> setting up: .venv/ and tools/node_modules/ (log: demo/setup.log)"
    if ! scripts/setup.sh 2>&1 | tee demo/setup.log | grep --line-buffered '^==>' |
        while IFS= read -r line; do echo "    $line"; done; then
        cat demo/setup.log >&2
        echo "demo: setup failed (log above)" >&2
        exit 1
    fi
fi
export PATH="$PWD/.venv/bin:$PATH"

DEMO="$PWD/demo"
# memfuse keeps its ledger and history in a state folder; the demo keeps its own in demo/, so
# that a re-run starts as fresh as its new database (not "35 lost: the store was reset?").
rm -rf "$DEMO/workspace" "$DEMO/agent-memory.db"* "$DEMO/state"
cp -r examples/workspace "$DEMO/workspace"
python - "$DEMO/workspace/memory" <<'PY'
import sys
from datetime import date, timedelta
from pathlib import Path

folder = Path(sys.argv[1])
journals = sorted(folder.glob("????-??-??.md"))
shift = date.today() - date.fromisoformat(journals[-1].stem)
for path in reversed(journals) if shift.days > 0 else journals:
    path.rename(folder / f"{date.fromisoformat(path.stem) + shift}.md")
PY
cat > "$DEMO/mcporter.json" <<JSON
{
  "mcpServers": {
    "agent-memory": {
      "command": "$PWD/.venv/bin/python",
      "args": ["-m", "memfuse.refserver"],
      "env": { "AGENT_MEMORY_DB": "$DEMO/agent-memory.db" }
    }
  },
  "imports": []
}
JSON

export MEMFUSE_WORKSPACE="$DEMO/workspace"
export MEMFUSE_STATE_DIR="$DEMO/state"
export MEMFUSE_MCPORTER="node $PWD/tools/node_modules/mcporter/dist/cli.js"
export MEMFUSE_MCPORTER_CONFIG="$DEMO/mcporter.json"

echo "==> memfuse doctor";            memfuse doctor
echo "==> memfuse sync --days 7";     memfuse sync --days 7
echo "==> memfuse surface";           memfuse surface
echo "==> memfuse tidy";              memfuse tidy
echo "==> $MEMFUSE_WORKSPACE/RECENT.md"
cat "$MEMFUSE_WORKSPACE/RECENT.md"
# By day: ask the memory, and write to it from the shell (a hook, a script, a person).
echo "==> memfuse recall \"what does Mia prefer\""; memfuse recall "what does Mia prefer" --limit 3
echo "==> memfuse note \"…\"";           memfuse note "The demo ran end to end, 心情不错: relieved it was this short"
echo "==> memfuse sync";               memfuse sync
