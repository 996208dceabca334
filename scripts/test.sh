#!/usr/bin/env bash
# Set up, then run every check CI runs: lint, format, types, the test suite, the smoke scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"

echo "==> ruff check";          ruff check src tests benchmarks
echo "==> ruff format --check"; ruff format --check src tests benchmarks
echo "==> mypy --strict src";   mypy --strict src
echo "==> pytest";              pytest "$@"
if compgen -G "tests/smoke/*.sh" > /dev/null; then
    for script in tests/smoke/*.sh; do
        echo "==> smoke: $script"
        bash "$script"
    done
fi
echo "==> all checks passed"
