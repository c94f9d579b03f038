#!/usr/bin/env bash
# Set up everything botbin needs in ./.venv (and node_modules for the front ends), offline-safe at run time.
# torch==2.13.0 is installed first so that the CPU build is used and no multi-GB CUDA build is pulled.
# --python-only skips the front ends' `npm install` (about 200 MB): the demo and the CLI do not need it.
set -euo pipefail
NPM=1
for arg in "$@"; do
  case "$arg" in
    --python-only) NPM=0 ;;
    *) echo "usage: scripts/setup.sh [--python-only]" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
python -m pip install -q --upgrade pip >/dev/null
# TORCH_INDEX_URL (e.g. https://download.pytorch.org/whl/cpu) picks the CPU wheels where PyPI would serve CUDA.
if ! python -c "import torch" 2>/dev/null; then
  python -m pip install -q "torch==2.13.0" ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"}
fi
python -m pip install -q -e ".[dev]"
if [ "$NPM" = 1 ] && [ -f package.json ] && command -v npm >/dev/null 2>&1; then
  npm install --no-audit --no-fund --silent
fi
# Neovim for the editor test (tests/editors/test_neovim.py): Debian's, when apt-get can install it (as root).
if [ "$NPM" = 1 ] && ! command -v nvim >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  { apt-get install -y -q neovim || { apt-get update -q && apt-get install -y -q neovim; }; } >/dev/null 2>&1 || echo "botbin: could not install neovim; the Neovim test is skipped" >&2
fi
echo "botbin: set up in $(pwd)/.venv" >&2
