/**
 * @botbin/client: the editor-independent half of every botbin front end (VS Code, Obsidian): botbin's
 * requests over JSON-RPC, a supervised server with restart backoff, indexing progress, and a clock that
 * tests can replace. Nothing here imports an editor's API.
 */
export * from "./api";
export * from "./clock";
export * from "./passphrase";
export * from "./progress";
export * from "./relevance";
export * from "./restartPolicy";
export * from "./supervisor";
export * from "./status";
export * from "./when";
