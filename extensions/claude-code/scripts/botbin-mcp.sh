#!/bin/sh
# The MCP server of the plugin (.mcp.json): `botbin mcp` on the project's workspace, for the expand_memory tool
# and the rest of botbin's tools. BOTBIN_COMMAND and BOTBIN_WORKSPACE as for the hooks (hooks/botbin-hook.sh).
BOTBIN="${BOTBIN_COMMAND:-botbin}"
if ! command -v "$BOTBIN" >/dev/null 2>&1; then
  echo "botbin mcp: botbin is not installed ('$BOTBIN' is not on PATH; set BOTBIN_COMMAND)" >&2
  exit 1
fi
exec "$BOTBIN" mcp --workspace "${BOTBIN_WORKSPACE:-${CLAUDE_PROJECT_DIR:-$PWD}}"
