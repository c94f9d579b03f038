#!/usr/bin/env bash
# Install the real Claude Code for the end-to-end tests of extensions/claude-code (tests/hosts/), cached outside
# the clone (a second run is a no-op): @anthropic-ai/claude-code from npm into
# ${BOTBIN_CLAUDE_CODE:-${XDG_CACHE_HOME:-$HOME/.cache}/botbin-hosts/claude-code}. Only the npm registry is used;
# the tests then run it against a scripted model on 127.0.0.1 (no account, no network).
set -euo pipefail
VERSION=2.1.332
DIR=${BOTBIN_CLAUDE_CODE:-${XDG_CACHE_HOME:-$HOME/.cache}/botbin-hosts/claude-code}
DONE="$DIR/.installed-$VERSION"
if [ -f "$DONE" ] && [ -x "$DIR/node_modules/.bin/claude" ]; then
  echo "botbin-hosts: Claude Code $VERSION already installed in $DIR" >&2
  exit 0
fi
mkdir -p "$DIR"
cd "$DIR"
[ -f package.json ] || echo '{"name":"botbin-claude-code","version":"1.0.0","private":true}' > package.json
npm install --no-audit --no-fund --save-exact "@anthropic-ai/claude-code@$VERSION"
HOME="$DIR" DISABLE_AUTOUPDATER=1 node_modules/.bin/claude --version
touch "$DONE"
echo "botbin-hosts: Claude Code $VERSION installed in $DIR" >&2
