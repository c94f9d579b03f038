#!/usr/bin/env bash
# Set up, then run the main job on the bundled example workspace: sync it, then search it by meaning.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --python-only  # the demo runs no front end: no npm install
. .venv/bin/activate
WS=examples/workspace
echo "== botbin sync (examples/workspace -> examples/workspace/memory/aifbin/)"
botbin --workspace "$WS" sync
echo "== botbin status"
botbin --workspace "$WS" status
echo "== botbin search \"why did the database run out of connections\""
botbin --workspace "$WS" search "why did the database run out of connections" -k 3
echo "== botbin search \"which charting library did we choose\""
botbin --workspace "$WS" search "which charting library did we choose" -k 3 --best-per-note
