/** What the extension tells the user when the server is not there to answer. */
import { type LockedError, type ServerState, wrongPassphrase } from "@botbin/client";

export const OPEN_SETTINGS = "Open settings";
export const SHOW_LOG = "Show log";
export const RESTART = "Restart";
export const ENTER_PASSPHRASE = "Enter passphrase";

/** What the user sees when the server says the store is encrypted, by the error's kind. */
export function lockedMessage(error: LockedError): string {
  return wrongPassphrase(error.kind)
    ? "botbin: the passphrase of this workspace's encrypted memory is wrong; nothing was read or changed."
    : "botbin: this workspace's memory is encrypted; enter its passphrase to sync and search it.";
}

/**
 * The message for a server that failed for good, naming the command line and the last error it printed.
 * `commandLine` is how it was started ("python3 -m botbin lsp"); `why` is the best reason known.
 */
export function failureMessage(reason: "startFailed" | "crashLoop", commandLine: string, why: string): string {
  if (reason === "startFailed") {
    return (
      `botbin: the language server did not start (${commandLine}): ${why}. ` +
      `Set "botbin.server.path" to the botbin executable, or "botbin.pythonPath" to a Python with botbin installed.`
    );
  }
  return `botbin: the language server keeps exiting (${commandLine}): ${why}. It will not be restarted until you ask.`;
}

/** What a command says when it needs the server and the server is not running. */
export function notRunningMessage(state: ServerState): string {
  switch (state.kind) {
    case "starting":
      return "botbin: the language server is still starting; try again in a moment.";
    case "restarting":
      return "botbin: the language server stopped and is restarting; try again in a moment.";
    case "failed":
      return "botbin: the language server is not running (see the botbin output).";
    case "stopped":
    case "running":
      return "botbin: the language server is not running.";
  }
}
