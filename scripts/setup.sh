#!/usr/bin/env bash
# Set up a development checkout from nothing: a venv with memfuse and its test tools, and the
# mcporter bridge under tools/. Idempotent; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "==> creating .venv with $("$PYTHON" --version)"
    "$PYTHON" -m venv .venv
fi
echo "==> installing memfuse and its dev/test dependencies into .venv"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'

echo "==> installing mcporter (tools/package.json) with npm"
if [ -f tools/package-lock.json ]; then
    npm ci --prefix tools --no-audit --no-fund --loglevel=error
else
    npm install --prefix tools --no-audit --no-fund --loglevel=error
fi
echo "==> ready: $(.venv/bin/memfuse --version), mcporter $(node tools/node_modules/mcporter/dist/cli.js --version)"
