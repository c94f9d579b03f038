/** How a hit reads in the search modal and the related pane: heading, note and line, score, snippet. */
import type { Hit } from "@botbin/protocol";

export interface HitText {
  /** The heading path (`Lighthouse › Decisions`), else the note's title. */
  title: string;
  /** `MEMORY.md:33 · 0.71` (1-based line). */
  location: string;
  /** The snippet on one line, clipped. */
  snippet: string;
}

const SNIPPET_CHARS = 200;

export function hitText(hit: Hit): HitText {
  const heading = hit.headingPath.filter((h) => h.trim()).join(" › ");
  return {
    title: heading || hit.title,
    location: `${hit.path}:${hit.startLine + 1} · ${hit.score.toFixed(2)}`,
    snippet: clip(hit.snippet.split(/\s+/).join(" ").trim(), SNIPPET_CHARS),
  };
}

function clip(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars - 1)}…`;
}
