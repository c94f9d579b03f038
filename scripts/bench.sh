#!/usr/bin/env bash
# Set up, add the optional benchmark packages (FAISS, usearch, ONNX Runtime, pytrec_eval; never runtime
# dependencies of botbin), then run every benchmark and write docs/benchmarks.md with its plots.
# Arguments go to bench/report.py: --quick (small variants), --only NAME[,NAME], --render-only.
# The full run takes about an hour on 2 idle cores; bench_peer.py installs memsearch into bench/out/peer-venv.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
. .venv/bin/activate
python -m pip install -q -r bench/requirements-optional.txt
python bench/report.py "$@"
