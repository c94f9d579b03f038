"""Names on the wire: botbin's custom LSP methods, commands and progress titles (``extensions/protocol/src/names.ts``
is generated from this module by scripts/gen_protocol.py, with the ``#:`` comments as its docs). Payloads are
camelCase JSON; see docs/protocol.md.
"""

from __future__ import annotations

SERVER_NAME = "botbin"

#: Request ``{query, k?, filters?: {pathGlob?, tag?, kind?, dateFrom?, dateTo?}, bestPerNote?}``
#: -> ``{hits, indexedAt, indexing, degraded}``.
SEARCH = "botbin/search"
#: Request ``{uri, position} | {text, uri?}`` plus ``k?`` -> ``{hits, indexing, degraded}``.
RELATED = "botbin/related"
#: Request ``{}`` -> ``{files, chunks, pending, lastSync, model, degraded, indexing, folders}``.
STATUS = "botbin/status"
#: Request ``{query, budgetTokens?, uri?}`` -> ``{text, tiers, usedTokens, budgetTokens}``.
CONTEXT = "botbin/context"
#: Request ``{text, tags?, uri?}`` -> ``{path, uri, range, text}`` (appends to today's daily note, then syncs).
REMEMBER = "botbin/remember"

#: Notification (server to client) ``{uri, kind, message, shownAs}``: a folder's sync or read failed; the
#: ``window/showMessage`` whose text is ``shownAs`` follows (see botbin.wire.errors.ErrorReport).
ERROR = "botbin/error"

#: ``workspace/executeCommand``: sync changed notes now (argument: none) -> sync summary.
COMMAND_SYNC = "botbin.sync"
#: ``workspace/executeCommand``: re-read and re-chunk every note (embeddings reused) -> sync summary.
COMMAND_REINDEX = "botbin.reindex"
#: ``workspace/executeCommand``: Recall Studio over the open folders (argument: ``{editor?}``) -> ``{url}``.
COMMAND_STUDIO = "botbin.studio"
COMMANDS = (COMMAND_SYNC, COMMAND_REINDEX, COMMAND_STUDIO)

#: Title of the ``$/progress`` work-done report while notes are indexed.
PROGRESS_TITLE = "botbin: indexing notes"
#: ``source`` of published diagnostics.
DIAGNOSTIC_SOURCE = "botbin"

#: Every custom request.
CUSTOM_REQUESTS = (SEARCH, RELATED, STATUS, CONTEXT, REMEMBER)
#: Every custom notification the server sends.
CUSTOM_NOTIFICATIONS = (ERROR,)
