#!/usr/bin/env bash
# Install what the real-VS-Code end-to-end test needs, cached outside the clone (a second run is a no-op):
# code-server 4.96.4 (the VS Code 1.96.4 workbench and extension host, from npm), Debian's Chromium and
# chromedriver (Selenium itself comes from pyproject's dev extra; tests/studio uses them too), and Firefox ESR
# (tests/studio/test_firefox.py). Only the PyPI, npm and Debian registries are used: Debian's ripgrep stands in
# for @vscode/ripgrep's GitHub download, and lib/vscode's one git dependency (@vscode/proxy-agent 0.27.0, a
# git+ssh URL) is pointed at the registry tarball of that version.
# Adapted from ../shared/tools/vscode-real (first run: ~3 min of native builds on 2 cores).
set -euo pipefail
R=${BOTBIN_VSCODE_REAL:-${XDG_CACHE_HOME:-$HOME/.cache}/botbin-vscode-real}
CS_VERSION=4.96.4
RG_PKG_VERSION=1.15.9   # @vscode/ripgrep, as pinned by code-server 4.96.4's lib/vscode/npm-shrinkwrap.json
DONE="$R/cs/.installed-$CS_VERSION"
need_apt=0
for exe in /usr/bin/rg /usr/bin/chromedriver /usr/lib/chromium/chromium /usr/bin/firefox-esr; do
  [ -x "$exe" ] || need_apt=1
done
if [ "$need_apt" = 1 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q ripgrep libkrb5-dev libx11-dev libxkbfile-dev \
    libsecret-1-dev build-essential pkg-config chromium chromium-driver firefox-esr
fi
if [ -f "$DONE" ]; then
  echo "botbin-vscode-real: code-server $CS_VERSION already installed in $R" >&2
  exit 0
fi
mkdir -p "$R/tmp/rgstage" "$R/tmp/vscode-ripgrep-cache-$RG_PKG_VERSION" "$R/cs" "$R/home"
cp /usr/bin/rg "$R/tmp/rgstage/rg"
tar czf "$R/tmp/vscode-ripgrep-cache-$RG_PKG_VERSION/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" \
  -C "$R/tmp/rgstage" rg
cd "$R/cs"
[ -f package.json ] || echo '{"name":"botbin-code-server","version":"1.0.0","private":true}' > package.json
TMPDIR="$R/tmp" npm install --ignore-scripts --no-audit --no-fund "code-server@$CS_VERSION"
SHRINK=node_modules/code-server/lib/vscode/npm-shrinkwrap.json
TARBALL=$(npm view @vscode/proxy-agent@0.27.0 dist.tarball)
sed -i "s#\"resolved\": \"git+ssh://git@github.com/microsoft/vscode-proxy-agent.git\#[0-9a-f]*\"#\"resolved\": \"$TARBALL\"#" \
  "$SHRINK"
if grep -q 'git+ssh://' "$SHRINK"; then
  echo "botbin-vscode-real: $SHRINK still has a git+ssh dependency" >&2
  exit 1
fi
TMPDIR="$R/tmp" npm_config_nodedir=/usr JOBS=2 npm rebuild --unsafe-perm --foreground-scripts
test -x node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg
HOME="$R/home" node_modules/.bin/code-server --version
touch "$DONE"
echo "botbin-vscode-real: installed in $R" >&2
