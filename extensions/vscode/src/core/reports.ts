/** Text for people: the answer of Sync Now / Reindex, and the lines of Show Status. */
import type { EncryptionState, StatusResult, SyncResult } from "@botbin/protocol";
import { plural, statusProblems } from "./statusModel";

export interface Report {
  message: string;
  severity: "info" | "warning" | "error";
}

/** One message for a `botbin.sync` / `botbin.reindex` answer, summed over the folders. */
export function syncReport(result: SyncResult, what: "sync" | "reindex"): Report {
  const errors = result.folders.filter((f) => f.error).map((f) => f.error as string);
  const failed = result.folders.flatMap((f) => f.failed);
  const sum = (pick: (f: SyncResult["folders"][number]) => number): number =>
    result.folders.reduce((total, f) => total + pick(f), 0);
  const counts =
    `${sum((f) => f.added.length)} added, ${sum((f) => f.modified.length)} modified, ` +
    `${sum((f) => f.deleted.length)} deleted, ${sum((f) => f.unchanged)} unchanged`;
  const done = what === "sync" ? "synced" : "reindexed";
  if (errors.length > 0) return { message: `botbin: ${what} failed: ${errors.join("; ")}`, severity: "error" };
  if (!result.done) return { message: `botbin: the ${what} is still running (${counts} so far)`, severity: "info" };
  if (failed.length > 0) {
    const names = failed.map((f) => `${f.path} (${f.reason})`).join(", ");
    return {
      message: `botbin: ${done} (${counts}); ${plural(failed.length, "note")} failed: ${names}`,
      severity: "warning",
    };
  }
  return { message: `botbin: ${done} (${counts})`, severity: "info" };
}

/** What a folder line adds about encryption at rest. */
const ENCRYPTION: Record<EncryptionState, string> = {
  off: "",
  on: " · encrypted",
  converting: " · encryption changing (the next sync finishes it)",
};

/** One line of Show Status; lines with a `path` open that note (at `line`, 0-based) when picked. */
export interface StatusLine {
  label: string;
  description?: string;
  detail?: string;
  /** Filesystem path of a note to open. */
  path?: string;
  line?: number;
}

export function statusLines(status: StatusResult): StatusLine[] {
  const out: StatusLine[] = [
    {
      label: `$(database) ${plural(status.files, "note")}, ${plural(status.chunks, "chunk")}`,
      description: status.indexing ? "indexing…" : `last sync ${status.lastSync ?? "never"}`,
      detail: `model: ${status.model ?? "none"}`,
    },
  ];
  for (const problem of statusProblems(status)) out.push({ label: `$(warning) ${problem}` });
  for (const folder of status.folders) {
    out.push({
      label: `$(folder) ${folder.workspace}`,
      description: `${plural(folder.files, "note")}, ${plural(folder.chunks, "chunk")}`,
      detail: `last sync ${folder.lastSync ?? "never"}${ENCRYPTION[folder.encryption ?? "off"]}`,
    });
    for (const note of folder.stale) {
      out.push({
        label: `$(history) ${note.path}`,
        description: `stale: ${note.reason}`,
        path: join(folder.workspace, note.path),
      });
    }
    for (const conflict of folder.conflicts) {
      out.push({
        label: `$(warning) conflicting rules: ${conflict.action}`,
        description: `${conflict.first.path}:${conflict.first.line + 1} vs ${conflict.second.path}:${conflict.second.line + 1}`,
        detail: conflict.message,
        path: join(folder.workspace, conflict.first.path),
        line: conflict.first.line,
      });
    }
    for (const warning of folder.warnings) out.push({ label: `$(info) ${warning}` });
  }
  return out;
}

function join(folder: string, relative: string): string {
  return `${folder.replace(/[\\/]+$/, "")}/${relative}`;
}
