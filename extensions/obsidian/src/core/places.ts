/** Vault paths, `file:` URIs and editor positions. CodeMirror's `{line, ch}` counts UTF-16 code units, as LSP does. */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Hit, Position } from "@botbin/protocol";

/** An Obsidian editor position (0-based line, UTF-16 column). */
export interface EditorPos {
  line: number;
  ch: number;
}

/** Makes `file:` URIs of vault-relative paths (`Projects/Plan.md`) below the vault's folder. */
export function uriMaker(vaultPath: string): (path: string) => string {
  return (path) => pathToFileURL(join(vaultPath, ...path.split("/"))).href;
}

export function toPosition(pos: EditorPos): Position {
  return { line: pos.line, character: pos.ch };
}

/** Where to put the cursor and what to scroll into view when a hit opens: its first line to its last. */
export function hitRange(hit: Hit): { from: EditorPos; to: EditorPos } {
  return { from: { line: hit.startLine, ch: 0 }, to: { line: Math.max(hit.startLine, hit.endLine - 1), ch: 0 } };
}
