/**
 * Names on the wire: botbin's custom LSP methods, commands and progress title. This file mirrors
 * server/botbin/lsp/protocol.py constant for constant (same names, same values); test/names.test.ts keeps
 * the two in step. Payloads are camelCase JSON; see docs/protocol.md.
 */

export const SERVER_NAME = "botbin";

/** Request {@link SearchRequest} -> {@link SearchResult}. */
export const SEARCH = "botbin/search";
/** Request {@link RelatedParams} -> {@link RelatedResult}. */
export const RELATED = "botbin/related";
/** Request `{}` -> {@link StatusResult}. */
export const STATUS = "botbin/status";
/** Request `{query, budgetTokens}` -> `{tiers, usedTokens}` (agent memory). */
export const CONTEXT = "botbin/context";
/** Request {@link RememberParams} -> {@link RememberResult}: append to today's daily note. */
export const REMEMBER = "botbin/remember";

/** Notification (server to client) {@link ErrorReport}: a folder's sync or read failed; a `window/showMessage`
 * whose text is its `shownAs` follows. */
export const ERROR = "botbin/error";

/** `workspace/executeCommand`: sync changed notes now (no arguments) -> {@link SyncResult}. */
export const COMMAND_SYNC = "botbin.sync";
/** `workspace/executeCommand`: re-read and re-chunk every note (embeddings reused) -> {@link SyncResult}. */
export const COMMAND_REINDEX = "botbin.reindex";
export const COMMANDS = [COMMAND_SYNC, COMMAND_REINDEX] as const;

/** Title of the `$/progress` work-done report while notes are indexed. */
export const PROGRESS_TITLE = "botbin: indexing notes";
/** `source` of published diagnostics. */
export const DIAGNOSTIC_SOURCE = "botbin";

/** Every custom request, for the cross-language constants test. */
export const CUSTOM_REQUESTS = [SEARCH, RELATED, STATUS, CONTEXT, REMEMBER] as const;
/** Every custom notification the server sends. */
export const CUSTOM_NOTIFICATIONS = [ERROR] as const;

export type ServerCommand = (typeof COMMANDS)[number];
export type CustomRequest = (typeof CUSTOM_REQUESTS)[number];
