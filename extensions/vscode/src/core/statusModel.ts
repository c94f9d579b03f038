/** What the status bar item says: a pure function of the server's state, indexing progress and status. */
import type { StatusResult } from "@botbin/protocol";
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
} from "@botbin/client";

export type { Severity, StatusInputs, StatusView };

export { plural, statusProblems };

export function statusView({ server, progress, status, checkedAt, now }: StatusInputs): StatusView {
  switch (server.kind) {
    case "stopped":
      return { text: "$(circle-slash) botbin", tooltip: "botbin: the language server is stopped", severity: "ok" };
    case "starting":
      return { text: "$(sync~spin) botbin", tooltip: "botbin: starting the language server…", severity: "ok" };
    case "restarting":
      return {
        text: "$(debug-restart) botbin",
        tooltip: `botbin: the language server stopped; restarting in ${seconds(server.delayMs)} (attempt ${server.attempt})`,
        severity: "warning",
      };
    case "failed":
      return {
        text: "$(error) botbin",
        tooltip: `botbin is not running: ${server.error}\nClick for details.`,
        severity: "error",
      };
    case "running":
      return runningView(progress, status, checkedAt ?? null, now ?? Date.now());
  }
}

function runningView(
  progress: IndexingProgress,
  reported: StatusResult | undefined,
  checkedAt: string | null,
  now: number,
): StatusView {
  const status = reported && duringProgress(reported, progress);
  const facts = status ? statusFacts(status, checkedAt, now) : [];
  const problems = status ? statusProblems(status) : [];
  const severity: Severity = problems.length > 0 ? "warning" : "ok";
  if (progress.active || status?.indexing) {
    const done = progress.percentage !== undefined ? ` ${progress.percentage}%` : "";
    return {
      text: `$(sync~spin) botbin${done}`,
      tooltip: lines(`botbin: indexing notes${progress.message ? ` (${progress.message})` : ""}…`, problems, facts),
      severity,
    };
  }
  if (!status) return { text: "$(database) botbin", tooltip: "botbin: the language server is running", severity };
  const stale = status.pending > 0 ? ` · ${status.pending} stale` : "";
  const icon = severity === "ok" ? "$(database)" : "$(warning)";
  return {
    text: `${icon} botbin: ${plural(status.chunks, "chunk")}${stale}`,
    tooltip: lines(severity === "ok" ? "botbin: up to date" : "botbin needs attention:", problems, facts),
    severity,
  };
}

function statusFacts(status: StatusResult, checkedAt: string | null, now: number): string[] {
  return [
    `${plural(status.files, "note")}, ${plural(status.chunks, "chunk")} indexed`,
    `last sync: ${relativeTime(later(status.lastSync, checkedAt), now)}`,
    `model: ${status.model ?? "none"}`,
  ];
}

function lines(head: string, problems: string[], facts: string[]): string {
  return [head, ...problems.map((p) => `⚠ ${p}`), ...facts].join("\n");
}
