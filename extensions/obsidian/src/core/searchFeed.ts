/**
 * The search modal's suggestions: `botbin/search` as the user types. Obsidian asks for suggestions on
 * every keystroke; each ask waits for the quiet time, a newer ask cancels the older request, and an
 * older ask is answered at once with the list already shown, so an answer that comes late can never
 * replace a newer one. The list always matches the text in the box.
 */
import { type Clock, Debouncer, resultCaveat } from "@botbin/client";
import type { Hit, SearchResult } from "@botbin/protocol";

/** One row of the modal: a hit that opens its note, or a line that opens nothing. */
export type Suggestion = { kind: "hit"; hit: Hit } | { kind: "message"; text: string };

export interface SearchFeedDeps {
  /** Sends `botbin/search`; the request is abandoned when `signal` aborts. */
  search(query: string, signal: AbortSignal): Promise<SearchResult>;
  clock: Clock;
  debounceMs: number;
}

export class SearchFeed {
  private readonly debouncer: Debouncer;
  private sequence = 0;
  private inflight: AbortController | undefined;
  /** Settles the ask that waits for the quiet time, if any. */
  private pending: ((suggestions: Suggestion[]) => void) | undefined;
  private shown: Suggestion[] = [];
  /** What the title should add: indexing, keyword-only (undefined when nothing to say). */
  caveat: string | undefined;
  /** Answers dropped because a newer query had been sent (for tests). */
  staleDropped = 0;

  constructor(private readonly deps: SearchFeedDeps) {
    this.debouncer = new Debouncer(deps.clock, deps.debounceMs);
  }

  /** The suggestions for `text`; resolves once, after the quiet time and the server's answer. */
  suggest(text: string): Promise<Suggestion[]> {
    const query = text.trim();
    const sequence = this.supersede();
    if (!query) return Promise.resolve((this.shown = []));
    return new Promise((resolve) => {
      this.pending = resolve;
      this.debouncer.run(() => {
        this.pending = undefined;
        void this.query(query, sequence).then(resolve);
      });
    });
  }

  /** Cancels the wait and the request in flight (the modal closed). */
  dispose(): void {
    this.supersede();
  }

  /** Makes every ask so far stale: the waiting one gets the current list, the request in flight is cancelled. */
  private supersede(): number {
    this.debouncer.cancel();
    this.pending?.(this.shown);
    this.pending = undefined;
    this.inflight?.abort();
    this.inflight = undefined;
    return ++this.sequence;
  }

  private async query(query: string, sequence: number): Promise<Suggestion[]> {
    const inflight = (this.inflight = new AbortController());
    let suggestions: Suggestion[];
    try {
      const result = await this.deps.search(query, inflight.signal);
      if (sequence !== this.sequence) return this.stale();
      this.caveat = resultCaveat(result);
      suggestions =
        result.hits.length > 0
          ? result.hits.map((hit) => ({ kind: "hit", hit }) as const)
          : [
              {
                kind: "message",
                text: result.indexing ? "No memories match yet (still indexing)" : "No memories match",
              },
            ];
    } catch (error) {
      if (sequence !== this.sequence) return this.stale();
      suggestions = [
        { kind: "message", text: `Search failed: ${error instanceof Error ? error.message : String(error)}` },
      ];
    }
    this.inflight = undefined;
    return (this.shown = suggestions);
  }

  private stale(): Suggestion[] {
    this.staleDropped += 1;
    return this.shown;
  }
}

/** What a list of hits adds to its title (the client core's, shared with VS Code). */
export { resultCaveat };
