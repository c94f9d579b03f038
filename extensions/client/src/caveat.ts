/**
 * What a list of hits adds to its title, in every editor: the index is still being built, the hits are ranked by
 * keywords alone, or how many weak hits the server left out (`hidden`: under its relevance floor).
 */
export function resultCaveat(result: { indexing: boolean; degraded: boolean; hidden?: number }): string | undefined {
  const caveats = [];
  if (result.indexing) caveats.push("indexing: results so far");
  if (result.degraded) caveats.push("keyword match only: the model is unavailable");
  if (result.hidden) caveats.push(`${result.hidden} weak ${result.hidden === 1 ? "match" : "matches"} hidden`);
  return caveats.length > 0 ? caveats.join("; ") : undefined;
}
