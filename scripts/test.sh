#!/usr/bin/env bash
# Set up, then run every check: ruff (lint and format), mypy (server strict, tests lenient), the Python tests
# (real model included), the TypeScript tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# A real VS Code for tests/editors/test_vscode_real.py: code-server + Chromium, cached in ~/.cache/botbin-vscode-real
# (first run: apt packages and ~3 min of native builds; then a no-op). BOTBIN_SKIP_VSCODE_REAL=1 leaves it out.
if [ "${BOTBIN_SKIP_VSCODE_REAL:-0}" != 1 ]; then
  ./scripts/vscode-real/install.sh
  export BOTBIN_REQUIRE_VSCODE_REAL=1  # the test fails, rather than skips, if the install is missing
fi
# The real Claude Code for tests/hosts/: @anthropic-ai/claude-code from npm, cached in ~/.cache/botbin-hosts (a
# no-op once installed). BOTBIN_SKIP_CLAUDE_CODE=1 leaves it out.
if [ "${BOTBIN_SKIP_CLAUDE_CODE:-0}" != 1 ]; then
  ./scripts/claude-code/install.sh
  export BOTBIN_REQUIRE_CLAUDE_CODE=1  # the tests fail, rather than skip, if the install is missing
fi
# The real OpenClaw for tests/hosts/test_openclaw.py: Node 24.21.0 (the npm registry's `node` package) and OpenClaw
# 2026.9.6 from npm, cached in ~/.cache/botbin-hosts/openclaw (30-40 s and 770 MB once; then a no-op).
# BOTBIN_SKIP_OPENCLAW_REAL=1 leaves it out (and skips those tests).
if [ "${BOTBIN_SKIP_OPENCLAW_REAL:-0}" != 1 ]; then
  ./scripts/openclaw-real/install.sh
fi
. .venv/bin/activate
ruff check server tests bench
ruff format --check server tests bench
mypy
(cd tests && mypy --config-file mypy.ini)  # the tests, leniently: every call into botbin is checked
# The ONNX Runtime tests get a process of their own: the main test process embeds with torch only (tests/conftest.py).
python -m pytest -q --ignore=tests/test_embedding_onnx.py "$@"
if [ $# -eq 0 ]; then
  python -m pytest -q tests/test_embedding_onnx.py
fi
# TypeScript front ends live in extensions/* (npm workspaces); run their tests once any exists.
if compgen -G "extensions/*/package.json" >/dev/null; then
  npm test --workspaces --if-present
fi
