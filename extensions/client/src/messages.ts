/** What a front end tells the user when the server is not there to answer (each names its own fix and retry). */
import type { ServerState } from "./supervisor";

/** How a front end says where to fix a server that does not start, and how to try again after a crash loop. */
export interface FailureHints {
  /** After a failed start: where to set the executable or the Python ("Set ... in Settings → botbin."). */
  fix: string;
  /** After a crash loop: how it starts again ("Run \"botbin: Restart server\" to try again."). */
  retry: string;
}

/**
 * The message for a server that failed for good, naming the command line and the last error it printed.
 * `commandLine` is how it was started ("python3 -m botbin lsp"); `why` is the best reason known.
 */
export function failureMessage(
  reason: "startFailed" | "crashLoop",
  commandLine: string,
  why: string,
  hints: FailureHints,
): string {
  if (reason === "startFailed")
    return `botbin: the language server did not start (${commandLine}): ${why}. ${hints.fix}`;
  return `botbin: the language server keeps exiting (${commandLine}): ${why}. ${hints.retry}`;
}

/** What a command says when it needs the server and the server is not running. */
export function notRunningMessage(state: ServerState): string {
  switch (state.kind) {
    case "starting":
      return "botbin: the language server is still starting; try again in a moment.";
    case "restarting":
      return "botbin: the language server stopped and is restarting; try again in a moment.";
    case "failed":
      return `botbin: the language server is not running: ${state.error}`;
    case "stopped":
    case "running":
      return "botbin: the language server is not running.";
  }
}
