/** What the status bar item says (@botbin/client's status view) in Obsidian's words, and the plugin's Notices. */
import {
  failureMessage as failure,
  type LockedError,
  type Severity,
  type StatusInputs,
  type StatusLook,
  type StatusView,
  statusView as view,
  wrongPassphrase,
} from "@botbin/client";

export { notRunningMessage } from "@botbin/client";
export type { Severity, StatusInputs, StatusView };

/** How the status problems name the plugin's sync command. */
export const SYNC_COMMAND_NAME = "botbin: Sync now";
/** How messages name the plugin's command that asks for the passphrase of an encrypted store. */
export const UNLOCK_COMMAND_NAME = "botbin: Unlock encrypted memory";

export const OBSIDIAN_LOOK: StatusLook = {
  icons: { stopped: "", starting: "", restarting: "", failed: "", indexing: "", ok: "", warning: "⚠ " },
  words: {
    stopped: ": off",
    starting: ": starting…",
    restarting: ": restarting…",
    failed: ": not running",
    indexing: ": indexing",
  },
  busy: "…",
  failedHint: "",
  syncCommand: SYNC_COMMAND_NAME,
  unlockCommand: UNLOCK_COMMAND_NAME,
};

export function statusView(inputs: StatusInputs): StatusView {
  return view(inputs, OBSIDIAN_LOOK);
}

/** The Notice for an encrypted store without its passphrase (or with a wrong one), by the error's kind. */
export function lockedMessage(error: LockedError): string {
  const what = wrongPassphrase(error.kind)
    ? "botbin: wrong passphrase for this vault's encrypted memory; nothing was read or changed."
    : "botbin: this vault's memory is encrypted.";
  return `${what} Click here (or run "${UNLOCK_COMMAND_NAME}") to enter its passphrase.`;
}

/** The Notice for a server that failed for good, naming the command line and the reason. */
export function failureMessage(reason: "startFailed" | "crashLoop", commandLine: string, why: string): string {
  return failure(reason, commandLine, why, {
    fix: "Set the botbin executable or a Python with botbin installed in Settings → botbin.",
    retry: 'Run "botbin: Restart server" to try again.',
  });
}
