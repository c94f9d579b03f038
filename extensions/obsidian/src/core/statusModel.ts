/** What the status bar item says: a pure function of the server's state, indexing progress and status. */
import {
  duringProgress,
  type IndexingProgress,
  later,
  plural,
  relativeTime,
  type ServerState,
  seconds,
  type Severity,
  type StatusInputs,
  type StatusView,
  statusProblems,
  type LockedError,
  wrongPassphrase,
} from "@botbin/client";

export type { Severity, StatusInputs, StatusView };
import type { StatusResult } from "@botbin/protocol";

/** How the status problems name the plugin's sync command. */
export const SYNC_COMMAND_NAME = "botbin: Sync now";
/** How messages name the plugin's command that asks for the passphrase of an encrypted store. */
export const UNLOCK_COMMAND_NAME = "botbin: Unlock encrypted memory";

/** The Notice for an encrypted store without its passphrase (or with a wrong one), by the error's kind. */
export function lockedMessage(error: LockedError): string {
  const what = wrongPassphrase(error.kind)
    ? "botbin: wrong passphrase for this vault's encrypted memory; nothing was read or changed."
    : "botbin: this vault's memory is encrypted.";
  return `${what} Click here (or run "${UNLOCK_COMMAND_NAME}") to enter its passphrase.`;
}

export function statusView({ server, progress, status, checkedAt, now }: StatusInputs): StatusView {
  switch (server.kind) {
    case "stopped":
      return { text: "botbin: off", tooltip: "botbin: the language server is stopped", severity: "ok" };
    case "starting":
      return { text: "botbin: starting…", tooltip: "botbin: starting the language server…", severity: "ok" };
    case "restarting":
      return {
        text: "botbin: restarting…",
        tooltip: `botbin: the language server stopped; restarting in ${seconds(server.delayMs)} (attempt ${server.attempt})`,
        severity: "warning",
      };
    case "failed":
      return { text: "botbin: not running", tooltip: `botbin is not running: ${server.error}`, severity: "error" };
    case "running":
      return runningView(progress, status && duringProgress(status, progress), checkedAt, now ?? Date.now());
  }
}

/** "120/900 chunks" of a progress message ("vault: 120/900 chunks"), if it has one. */
function chunkCount(message: string | undefined): string | undefined {
  return message?.match(/\d+\/\d+ chunks/)?.[0];
}

function runningView(
  progress: IndexingProgress,
  status: StatusResult | undefined,
  checkedAt: string | undefined,
  now: number,
): StatusView {
  const problems = status ? statusProblems(status, SYNC_COMMAND_NAME, UNLOCK_COMMAND_NAME) : [];
  const facts = status
    ? [
        `${plural(status.files, "note")}, ${plural(status.chunks, "chunk")} indexed`,
        `last sync: ${relativeTime(later(status.lastSync, checkedAt), now)}`,
        `model: ${status.model ?? "none"}`,
      ]
    : [];
  const severity: Severity = problems.length > 0 ? "warning" : "ok";
  const lines = (head: string): string => [head, ...problems.map((p) => `⚠ ${p}`), ...facts].join("\n");
  if (progress.active || status?.indexing) {
    const done = progress.percentage !== undefined ? ` ${progress.percentage}%` : "";
    const count = chunkCount(progress.message);
    return {
      text: `botbin: indexing${done}${count ? ` (${count})` : ""}…`,
      tooltip: lines(`botbin: indexing notes${progress.message ? ` (${progress.message})` : ""}…`),
      severity,
    };
  }
  if (!status) return { text: "botbin", tooltip: "botbin: the language server is running", severity };
  const degraded = status.degraded ? " (keywords only)" : "";
  const stale = status.pending > 0 ? ` · ${status.pending} stale` : "";
  return {
    text: `${severity === "ok" ? "" : "⚠ "}botbin: ${plural(status.chunks, "chunk")}${degraded}${stale}`,
    tooltip: lines(severity === "ok" ? "botbin: up to date" : "botbin needs attention:"),
    severity,
  };
}

/** The Notice for a server that failed for good, naming the command line and the reason. */
export function failureMessage(reason: "startFailed" | "crashLoop", commandLine: string, why: string): string {
  if (reason === "startFailed") {
    return (
      `botbin: the language server did not start (${commandLine}): ${why}. ` +
      `Set the botbin executable or a Python with botbin installed in Settings → botbin.`
    );
  }
  return `botbin: the language server keeps exiting (${commandLine}): ${why}. Run "botbin: Restart server" to try again.`;
}

/** What a command says when it needs the server and the server is not running. */
export function notRunningMessage(state: ServerState): string {
  switch (state.kind) {
    case "starting":
    case "restarting":
      return "botbin: the language server is starting; try again in a moment.";
    case "failed":
      return `botbin: the language server is not running: ${state.error}`;
    case "stopped":
    case "running":
      return "botbin: the language server is not running.";
  }
}
