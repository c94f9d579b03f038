#!/usr/bin/env bash
# The fast check, under a minute on 2 idle cores: ruff (lint and format), mypy (server strict, tests lenient), the
# generated files (scripts/gen_protocol.py --check), and the tests that need neither the model nor a botbin process
# nor a real editor, host or database (markers set in tests/markers.py). Arguments go to pytest.
# Everything else: scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-$PWD/.venv/bin/python}"  # a command or an absolute path
"$PY" -m ruff check server tests bench scripts
"$PY" -m ruff format --check server tests bench scripts
"$PY" -m mypy
(cd tests && "$PY" -m mypy --config-file mypy.ini)
"$PY" scripts/gen_protocol.py --check
"$PY" -m pytest -q -m "not (model or process or editor or host or postgres or crash or slow)" "$@"
