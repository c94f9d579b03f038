#!/bin/sh
# Claude Code runs this for each hook event (hooks.json): it hands the event's JSON to `botbin hook EVENT`, which
# prints what Claude Code expects. Whatever happens, the exit status is 0 (an exit status of 2 would block the
# user's prompt): a missing botbin is one line on stderr and no memory this turn. BOTBIN_COMMAND names another
# botbin (a path, e.g. a virtual environment's); default: `botbin` on PATH.
BOTBIN="${BOTBIN_COMMAND:-botbin}"
if ! command -v "$BOTBIN" >/dev/null 2>&1; then
  echo "botbin hook $1: botbin is not installed ('$BOTBIN' is not on PATH; set BOTBIN_COMMAND); no memory this turn" >&2
  cat >/dev/null
  exit 0
fi
"$BOTBIN" hook "$1" || echo "botbin hook $1: '$BOTBIN hook' exited with status $?; no memory this turn" >&2
exit 0
