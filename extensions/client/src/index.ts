/**
 * @botbin/client: the editor-independent half of every botbin front end (VS Code, Obsidian): botbin's
 * requests over JSON-RPC, a supervised server with restart backoff, the session around it (status polling,
 * passphrase offers), indexing progress, the status bar view, the server command line, type guards, and a clock
 * that tests can replace. Nothing here imports an editor's API.
 */
export * from "./api";
export * from "./caveat";
export * from "./clock";
export * from "./guards";
export * from "./lastWords";
export * from "./messages";
export * from "./passphrase";
export * from "./progress";
export * from "./restartPolicy";
export * from "./serverCommand";
export * from "./session";
export * from "./supervisor";
export * from "./status";
export * from "./statusView";
export * from "./when";
