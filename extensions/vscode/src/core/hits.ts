/**
 * Search and related hits as QuickPick items: the note, heading path, score and snippet of each. The
 * server sends snippets already clean (plain text, cut at word boundaries); they are shown as they are.
 */
import type { Hit } from "@botbin/protocol";

/** A QuickPick item (structurally a vscode.QuickPickItem), with the hit it opens, if any. */
export interface HitItem {
  label: string;
  description?: string;
  detail?: string;
  /** Always true: the server ranks by meaning, so the QuickPick must not filter by the typed text. */
  alwaysShow: boolean;
  hit?: Hit;
}

export function hitItem(hit: Hit): HitItem {
  const heading = hit.headingPath.filter((h) => h.trim()).join(" › ");
  return {
    label: `$(note) ${heading || hit.title}`,
    description: `${hit.path}:${hit.startLine + 1} · ${hit.score.toFixed(2)}`,
    detail: hit.snippet.replace(/\s*\n\s*/g, " "), // one line: a QuickPick detail cannot break lines
    alwaysShow: true,
    hit,
  };
}

/** The hits as items (the server has left out those under the relevance floor); a line that says why there are
 * none otherwise ("Indexing…" while nothing is indexed yet). */
export function resultItems(result: { hits: Hit[]; indexing: boolean }): HitItem[] {
  if (result.hits.length > 0) return result.hits.map(hitItem);
  return [messageItem(result.indexing ? "$(sync~spin) Indexing… no memories match yet" : "No memories match")];
}

/** A line that opens nothing ("No memories match"). */
export function messageItem(text: string): HitItem {
  return { label: text, alwaysShow: true };
}

/** What a QuickPick of hits adds to its title (the client core's, shared with Obsidian). */
export { resultCaveat } from "@botbin/client";
