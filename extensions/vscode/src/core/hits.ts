/** Search and related hits as QuickPick items: the note, heading path, score and snippet of each. */
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

const SNIPPET_CHARS = 200;

export function hitItem(hit: Hit): HitItem {
  const heading = hit.headingPath.filter((h) => h.trim()).join(" › ");
  return {
    label: `$(note) ${heading || hit.title}`,
    description: `${hit.path}:${hit.startLine + 1} · ${hit.score.toFixed(2)}`,
    detail: clip(hit.snippet.split(/\s+/).join(" ").trim(), SNIPPET_CHARS),
    alwaysShow: true,
    hit,
  };
}

/** A line that opens nothing ("No memories match"). */
export function messageItem(text: string): HitItem {
  return { label: text, alwaysShow: true };
}

/** What a QuickPick of hits should add to its title: the index is still being built, or keyword-only. */
export function resultCaveat(result: { indexing: boolean; degraded: boolean }): string | undefined {
  const caveats = [];
  if (result.indexing) caveats.push("indexing: results so far");
  if (result.degraded) caveats.push("keyword match only: the model is unavailable");
  return caveats.length > 0 ? caveats.join("; ") : undefined;
}

function clip(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars - 1)}…`;
}
