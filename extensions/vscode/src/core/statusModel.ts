/** What the status bar item says (@botbin/client's status view), with VS Code's codicons. */
import {
  plural,
  type Severity,
  type StatusInputs,
  type StatusLook,
  type StatusView,
  statusProblems,
  statusView as view,
} from "@botbin/client";

export type { Severity, StatusInputs, StatusView };

export { plural, statusProblems };

export const VSCODE_LOOK: StatusLook = {
  icons: {
    stopped: "$(circle-slash) ",
    starting: "$(sync~spin) ",
    restarting: "$(debug-restart) ",
    failed: "$(error) ",
    indexing: "$(sync~spin) ",
    ok: "$(database) ",
    warning: "$(warning) ",
  },
  words: { stopped: "", starting: "", restarting: "", failed: "", indexing: "" },
  busy: "",
  failedHint: "Click for details.",
  syncCommand: "Botbin: Sync Now",
  unlockCommand: "Botbin: Set Passphrase for Encrypted Memory",
};

export function statusView(inputs: StatusInputs): StatusView {
  return view(inputs, VSCODE_LOOK);
}
