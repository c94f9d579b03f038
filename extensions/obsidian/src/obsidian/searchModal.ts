/** The search modal: a SuggestModal fed by `botbin/search` as the user types (see core/searchFeed.ts). */
import { type App, SuggestModal } from "obsidian";
import { systemClock } from "@botbin/client";
import type { Hit, SearchResult } from "@botbin/protocol";
import type { Session } from "../core/session";
import { hitText } from "../core/hitText";
import { SearchFeed, type Suggestion } from "../core/searchFeed";

export const SEARCH_PLACEHOLDER = "Search memories by meaning: which database did we choose?";

export interface SearchModalDeps {
  search(query: string, signal: AbortSignal): Promise<SearchResult>;
  open(hit: Hit): unknown;
  debounceMs: number;
}

export class SearchModal extends SuggestModal<Suggestion> {
  readonly feed: SearchFeed;

  constructor(
    app: App,
    private readonly deps: SearchModalDeps,
  ) {
    super(app);
    this.feed = new SearchFeed({ search: deps.search, clock: systemClock, debounceMs: deps.debounceMs });
    this.limit = 1000; // the server already returns top-k
    this.emptyStateText = "Type to search your notes by meaning.";
    this.setPlaceholder(SEARCH_PLACEHOLDER);
    this.showInstructions(undefined);
  }

  async getSuggestions(query: string): Promise<Suggestion[]> {
    const suggestions = await this.feed.suggest(query);
    this.showInstructions(this.feed.caveat);
    return suggestions;
  }

  renderSuggestion(suggestion: Suggestion, el: HTMLElement): void {
    if (suggestion.kind === "message") {
      el.createDiv({ text: suggestion.text, cls: "botbin-message" });
      return;
    }
    const text = hitText(suggestion.hit);
    el.addClass("botbin-hit");
    el.createDiv({ text: text.title, cls: "botbin-hit-title" });
    el.createEl("small", { text: text.location, cls: "botbin-hit-location" });
    el.createDiv({ text: text.snippet, cls: "botbin-hit-snippet" });
  }

  onChooseSuggestion(suggestion: Suggestion): void {
    if (suggestion.kind === "hit") void this.deps.open(suggestion.hit);
  }

  override onClose(): void {
    super.onClose();
    this.feed.dispose();
  }

  private showInstructions(caveat: string | undefined): void {
    const instructions = [{ command: "↵", purpose: "open the note at the memory" }];
    if (caveat) instructions.push({ command: "⚠", purpose: caveat });
    this.setInstructions(instructions);
  }
}

/** Opens the search modal on the session's server; undefined, after a Notice, when none is running. */
export function openSearchModal(
  app: App,
  session: Session,
  debounceMs: number,
  open: (hit: Hit) => unknown,
): SearchModal | undefined {
  if (!session.requireApi()) return undefined;
  const modal = new SearchModal(app, {
    search: (query, signal) => {
      const api = session.api; // no Notice per keystroke: the list says the server is gone
      return api ? api.search({ query }, signal) : Promise.reject(new Error("the language server is not running"));
    },
    open,
    debounceMs,
  });
  modal.open();
  return modal;
}
