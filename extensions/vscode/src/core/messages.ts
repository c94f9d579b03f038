/** What the extension tells the user when the server is not there to answer. */
import { type LockedError, failureMessage as failure, wrongPassphrase } from "@botbin/client";

export { notRunningMessage } from "@botbin/client";

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

/** The message for a server that failed for good, naming the command line and the last error it printed. */
export function failureMessage(reason: "startFailed" | "crashLoop", commandLine: string, why: string): string {
  return failure(reason, commandLine, why, {
    fix: 'Set "botbin.server.path" to the botbin executable, or "botbin.pythonPath" to a Python with botbin installed.',
    retry: "It will not be restarted until you ask.",
  });
}
