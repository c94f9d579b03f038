// Turns the server has not yet written to the notes, kept in a file of the engine's own so that none is lost when
// botbin is absent, slow, locked or killed: written (fsync) before the host is told the turn is committed, sent
// again on the next contact (the server skips ids it already has), dropped once an answer no longer lists them as
// pending. One JSON turn per line; rewritten through a temporary file and a rename.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { Turn } from "./messages";

function isTurn(value: unknown): value is Turn {
  if (value === null || typeof value !== "object") return false;
  const t = value as Record<string, unknown>;
  return typeof t.role === "string" && typeof t.content === "string" && typeof t.id === "string";
}

export class Spool {
  constructor(readonly path: string) {}

  /** The turns waiting, oldest first, each id once (a damaged line is skipped, never fatal). */
  read(): Turn[] {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch {
      return [];
    }
    const seen = new Set<string>();
    const turns: Turn[] = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue; // a line torn by a crash mid-append: the rest still counts
      }
      if (isTurn(value) && !seen.has(value.id)) {
        seen.add(value.id);
        turns.push(value);
      }
    }
    return turns;
  }

  /** Add `turns` durably (fsync) before returning. */
  append(turns: readonly Turn[]): void {
    if (turns.length === 0) return;
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const fd = openSync(this.path, "a", 0o600);
    try {
      writeSync(fd, turns.map((t) => JSON.stringify(t) + "\n").join(""));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Drop the turns whose id is in `done` (atomic: a crash leaves the old file or the new one); turns added
   * since they were read stay. */
  remove(done: ReadonlySet<string>): void {
    if (done.size === 0) return;
    const turns = this.read().filter((t) => !done.has(t.id));
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeSync(fd, turns.map((t) => JSON.stringify(t) + "\n").join(""));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
  }
}
