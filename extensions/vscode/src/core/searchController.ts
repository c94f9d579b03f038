/**
 * Search Memories: a QuickPick that queries `botbin/search` as the user types. Typing is debounced, an
 * older request is cancelled when a newer one starts, and any answer that arrives after a newer query
 * was sent is dropped, so the list always matches the text in the box.
 */
import type { Hit, SearchResult } from "@botbin/protocol";
import { type Clock, Debouncer } from "@botbin/client";
import { type HitItem, messageItem, resultCaveat, resultItems } from "./hits";

/** A disposable, like vscode.Disposable. */
export interface Disposable {
  dispose(): unknown;
}

/** The part of vscode.QuickPick<HitItem> the controller uses (a real QuickPick satisfies it). */
export interface PickView {
  value: string;
  items: readonly HitItem[];
  busy: boolean;
  title: string | undefined;
  placeholder: string | undefined;
  readonly activeItems: readonly HitItem[];
  readonly selectedItems: readonly HitItem[];
  onDidChangeValue(listener: (value: string) => unknown): Disposable;
  onDidAccept(listener: () => unknown): Disposable;
  onDidHide(listener: () => unknown): Disposable;
  show(): void;
  hide(): void;
  dispose(): void;
}

export interface SearchDeps {
  /** Sends `botbin/search`; the request is abandoned when `signal` aborts. */
  search(query: string, signal: AbortSignal): Promise<SearchResult>;
  /** Opens the note at the hit's range. */
  open(hit: Hit): unknown;
  clock: Clock;
  /** Quiet time after the last keystroke before a query is sent, in milliseconds. */
  debounceMs: number;
}

export const SEARCH_TITLE = "botbin: search memories";
export const SEARCH_PLACEHOLDER = "Ask by meaning: which database did we choose?";

export class SearchController {
  private readonly debouncer: Debouncer;
  private readonly subscriptions: Disposable[];
  /** Number of the latest query; an answer to any other is stale. */
  private sequence = 0;
  private inflight: AbortController | undefined;
  /** Answers dropped because a newer query had been sent (for tests and the log). */
  staleDropped = 0;
  private disposed = false;

  constructor(
    private readonly view: PickView,
    private readonly deps: SearchDeps,
  ) {
    this.debouncer = new Debouncer(deps.clock, deps.debounceMs);
    view.title = SEARCH_TITLE;
    view.placeholder = SEARCH_PLACEHOLDER;
    this.subscriptions = [
      view.onDidChangeValue((value) => this.changed(value)),
      view.onDidAccept(() => this.accept()),
      view.onDidHide(() => this.dispose()),
    ];
  }

  show(): void {
    this.view.show();
    if (this.view.value.trim()) this.changed(this.view.value);
  }

  private changed(value: string): void {
    const query = value.trim();
    this.debouncer.cancel();
    if (!query) {
      this.supersede();
      this.view.items = [];
      this.view.busy = false;
      this.view.title = SEARCH_TITLE;
      return;
    }
    this.debouncer.run(() => void this.query(query));
  }

  /** Makes every request sent so far stale, and cancels the one in flight. Returns the new number. */
  private supersede(): number {
    this.inflight?.abort();
    this.inflight = undefined;
    return ++this.sequence;
  }

  private async query(query: string): Promise<void> {
    const sequence = this.supersede();
    const inflight = (this.inflight = new AbortController());
    this.view.busy = true;
    let result: SearchResult;
    try {
      result = await this.deps.search(query, inflight.signal);
    } catch (error) {
      if (sequence !== this.sequence) return void this.staleDropped++;
      this.view.busy = false;
      this.view.items = [messageItem(`$(error) search failed: ${error instanceof Error ? error.message : error}`)];
      return;
    }
    if (sequence !== this.sequence) return void this.staleDropped++;
    this.inflight = undefined;
    this.view.busy = false;
    const caveat = resultCaveat(result);
    this.view.title = caveat ? `${SEARCH_TITLE} (${caveat})` : SEARCH_TITLE;
    this.view.items = resultItems(result);
  }

  private accept(): void {
    const item = this.view.selectedItems[0] ?? this.view.activeItems[0];
    if (!item?.hit) return;
    const hit = item.hit;
    this.view.hide();
    this.deps.open(hit);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.debouncer.cancel();
    this.supersede();
    for (const subscription of this.subscriptions) subscription.dispose();
    this.view.dispose();
  }
}
