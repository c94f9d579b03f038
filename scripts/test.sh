#!/usr/bin/env bash
# Set up, then run every check: ruff, mypy, the Python tests (real model included), the TypeScript tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
. .venv/bin/activate
ruff check server tests bench
mypy
python -m pytest -q "$@"
# TypeScript front ends live in extensions/* (npm workspaces); run their tests once any exists.
if compgen -G "extensions/*/package.json" >/dev/null; then
  npm test --workspaces --if-present
fi
