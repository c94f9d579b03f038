/** Facts about a `botbin/status` answer that every front end shows the same way. */
import type { MigrationStatus, StatusResult } from "@botbin/protocol";
import { needsPassphrase, wrongPassphrase } from "./passphrase";
import type { IndexingProgress } from "./progress";
import type { ServerState } from "./supervisor";

export type Severity = "ok" | "warning" | "error";

/** What a status bar item says; each front end renders it its own way. */
export interface StatusView {
  /** The item's text (the VS Code extension adds codicons such as `$(database)`). */
  text: string;
  /** Hover text, one fact per line. */
  tooltip: string;
  /** ok: default colours; warning and error: the editor's warning or error look. */
  severity: Severity;
}

/** What the status bar is computed from. */
export interface StatusInputs {
  server: ServerState;
  progress: IndexingProgress;
  /** The last `botbin/status` answer of the running server, if any yet. */
  status?: StatusResult | undefined;
  /** When this client last saw a sync end (ISO 8601), a no-op one included: "Last sync" shows the later of
   * this and the server's `lastSync` (which only a sync that changed something moves). */
  checkedAt?: string | undefined;
  /** Now, in ms since the epoch (tests fix it); default Date.now(). */
  now?: number | undefined;
}

/** `status` as the status bar should judge it: while progress says a sync runs, it is indexing (the answer
 * may predate the sync, and its changed notes are what the sync is working on). */
export function duringProgress(status: StatusResult, progress: IndexingProgress): StatusResult {
  return progress.active && !status.indexing ? { ...status, indexing: true } : status;
}

/** Why the memory is not in a good state: degraded search, stale notes, failed syncs, a locked store. */
export function statusProblems(
  status: StatusResult,
  syncCommand = "Botbin: Sync Now",
  unlockCommand = "Botbin: Set Passphrase for Encrypted Memory",
): string[] {
  const problems: string[] = [];
  if (status.degraded) {
    const reason = status.folders.find((f) => f.modelError)?.modelError;
    problems.push(`keyword search only: the embedding model is unavailable${reason ? ` (${reason})` : ""}`);
  }
  if (status.pending > 0 && !status.indexing) {
    problems.push(`${plural(status.pending, "note")} changed since the last sync: run "${syncCommand}"`);
  }
  for (const folder of status.folders) {
    if (needsPassphrase(folder.lastErrorKind)) {
      const why = wrongPassphrase(folder.lastErrorKind) ? "the passphrase is wrong" : "it needs its passphrase";
      problems.push(`the memory is encrypted and ${why}: run "${unlockCommand}"`);
    } else if (folder.lastError && folder.lastError !== folder.modelError) {
      problems.push(`sync failed: ${folder.lastError}`);
    }
    const migration = folder.migration;
    if (migration?.phase === "failed" || migration?.phase === "refused") {
      problems.push(migrationText(migration));
    }
  }
  return problems;
}

/** One line on a folder's model migration: how far the new model's index is, or why it stopped. */
export function migrationText(m: MigrationStatus): string {
  const notes = `${m.notesDone}/${plural(m.notesTotal, "note")}`;
  switch (m.phase) {
    case "embedding":
      return `moving to model ${m.toModel}: ${notes} re-embedded (${m.fromModel} answers until the switch)`;
    case "switching":
      return `switching to model ${m.toModel}`;
    case "paused":
      return `moving to model ${m.toModel}: paused at ${notes} (the next sync resumes it)`;
    case "failed":
      return `the move to model ${m.toModel} stopped: ${m.message} (${m.fromModel} answers)`;
    case "refused":
      return `the model setting ${m.toModel} is not used: ${m.message} (${m.fromModel} answers)`;
  }
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** A duration for people: "500 ms", "1.5 s". */
export function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
