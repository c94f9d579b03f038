/**
 * What the status bar item says: one pure function of the server's state, indexing progress and status for every
 * front end, which only chooses its look (VS Code's codicons, Obsidian's words).
 */
import type { MigrationStatus, StatusResult } from "@botbin/protocol";
import type { IndexingProgress } from "./progress";
import {
  duringProgress,
  migrationText,
  plural,
  seconds,
  type Severity,
  type StatusInputs,
  statusProblems,
  type StatusView,
} from "./status";
import { later, relativeTime } from "./when";

/** The parts of the status text that differ between front ends. */
export interface StatusLook {
  /** Put before "botbin" in each state ("" for none): VS Code's `$(database) `, Obsidian's `⚠ ` for a warning. */
  icons: Record<"stopped" | "starting" | "restarting" | "failed" | "indexing" | "ok" | "warning", string>;
  /** Put after "botbin" in a server state that no icon shows (Obsidian: `: off`, `: starting…`). */
  words: Record<"stopped" | "starting" | "restarting" | "failed" | "indexing", string>;
  /** Ends the text while indexing (Obsidian: `…`). */
  busy: string;
  /** Added to the tooltip of a server that failed (VS Code: "Click for details."). */
  failedHint: string;
  /** How the problems name the sync and unlock commands of this front end. */
  syncCommand: string;
  unlockCommand: string;
}

export function statusView(inputs: StatusInputs, look: StatusLook): StatusView {
  const { server } = inputs;
  const text = (state: keyof StatusLook["words"] & keyof StatusLook["icons"]): string =>
    `${look.icons[state]}botbin${look.words[state]}`;
  switch (server.kind) {
    case "stopped":
      return { text: text("stopped"), tooltip: "botbin: the language server is stopped", severity: "ok" };
    case "starting":
      return { text: text("starting"), tooltip: "botbin: starting the language server…", severity: "ok" };
    case "restarting":
      return {
        text: text("restarting"),
        tooltip: `botbin: the language server stopped; restarting in ${seconds(server.delayMs)} (attempt ${server.attempt})`,
        severity: "warning",
      };
    case "failed":
      return {
        text: text("failed"),
        tooltip: [`botbin is not running: ${server.error}`, look.failedHint].filter(Boolean).join("\n"),
        severity: "error",
      };
    case "running":
      return runningView(inputs, look);
  }
}

/** "120/900 chunks" of a progress message ("vault: 120/900 chunks"), if it has one. */
function chunkCount(message: string | undefined): string | undefined {
  return message?.match(/\d+\/\d+ chunks/)?.[0];
}

function runningView({ progress, status: reported, checkedAt, now }: StatusInputs, look: StatusLook): StatusView {
  const status = reported && duringProgress(reported, progress);
  const problems = status ? statusProblems(status, look.syncCommand, look.unlockCommand) : [];
  const facts = status ? statusFacts(status, checkedAt ?? null, now ?? Date.now()) : [];
  const severity: Severity = problems.length > 0 ? "warning" : "ok";
  const lines = (head: string): string => [head, ...problems.map((p) => `⚠ ${p}`), ...facts].join("\n");
  if (progress.active || status?.indexing) return indexingView(progress, look, lines, severity);
  if (!status) return { text: `${look.icons.ok}botbin`, tooltip: "botbin: the language server is running", severity };
  const degraded = status.degraded ? " (keywords only)" : "";
  const stale = status.pending > 0 ? ` · ${status.pending} stale` : "";
  return {
    text: `${look.icons[severity === "ok" ? "ok" : "warning"]}botbin: ${plural(status.chunks, "chunk")}${degraded}${stale}`,
    tooltip: lines(severity === "ok" ? "botbin: up to date" : "botbin needs attention:"),
    severity,
  };
}

function indexingView(
  progress: IndexingProgress,
  look: StatusLook,
  lines: (head: string) => string,
  severity: Severity,
): StatusView {
  const done = progress.percentage !== undefined ? ` ${progress.percentage}%` : "";
  const count = chunkCount(progress.message);
  return {
    text: `${look.icons.indexing}botbin${look.words.indexing}${done}${count ? ` (${count})` : ""}${look.busy}`,
    tooltip: lines(`botbin: indexing notes${progress.message ? ` (${progress.message})` : ""}…`),
    severity,
  };
}

function statusFacts(status: StatusResult, checkedAt: string | null, now: number): string[] {
  return [
    `${plural(status.files, "note")}, ${plural(status.chunks, "chunk")} indexed`,
    `last sync: ${relativeTime(later(status.lastSync, checkedAt), now)}`,
    `model: ${status.model ?? "none"}`,
    ...status.folders
      .map((f) => f.migration)
      // an older server sends no migration: none
      .filter((m): m is MigrationStatus => m != null && m.phase !== "failed" && m.phase !== "refused")
      .map(migrationText),
  ];
}
