/**
 * The related-memories pane's model: follows the active note and the cursor's line, asks `botbin/related`
 * for that paragraph once the cursor rests, and drops answers for a place the cursor has already left.
 * Typing moves the cursor on every keystroke, so nothing is asked until it has been still for `restMs`.
 */
import { type Clock, Debouncer } from "@botbin/client";
import type { Hit, Position, RelatedResult } from "@botbin/protocol";
import { resultCaveat } from "./searchFeed";

/** Where the cursor is: a note (vault-relative path and `file:` URI) and an LSP position. */
export interface CursorPlace {
  path: string;
  uri: string;
  position: Position;
}

export type RelatedState =
  | { kind: "noNote" }
  | { kind: "loading"; path: string }
  | { kind: "hits"; path: string; hits: Hit[]; caveat?: string | undefined }
  | { kind: "empty"; path: string; indexing: boolean }
  | { kind: "error"; path: string; message: string };

export interface RelatedDeps {
  /** Sends `botbin/related`; the request is abandoned when `signal` aborts. */
  related(place: CursorPlace, signal: AbortSignal): Promise<RelatedResult>;
  /** Called with every new state of the pane. */
  render(state: RelatedState): void;
  clock: Clock;
  /** How long the cursor must rest before the pane asks, in milliseconds. */
  restMs: number;
  /** False while no pane is open: nothing is asked then (call refresh() when one opens). Default: always. */
  visible?(): boolean;
}

export class RelatedTracker {
  private readonly debouncer: Debouncer;
  private place: CursorPlace | undefined;
  /** The place the current answer (or request) is for, as `uri:line`. */
  private askedKey: string | undefined;
  private inflight: AbortController | undefined;
  private sequence = 0;
  state: RelatedState = { kind: "noNote" };

  constructor(private readonly deps: RelatedDeps) {
    this.debouncer = new Debouncer(deps.clock, deps.restMs);
  }

  /** The cursor moved, or another note became active (undefined: no markdown note is active). */
  moved(place: CursorPlace | undefined): void {
    this.place = place;
    if (!place) {
      this.supersede();
      this.askedKey = undefined;
      this.set({ kind: "noNote" });
      return;
    }
    if (key(place) === this.askedKey) return this.debouncer.cancel();
    this.debouncer.run(() => void this.ask());
  }

  /** Asks again for the same place (the note was saved, the server restarted). */
  refresh(): void {
    this.askedKey = undefined;
    if (this.place) this.debouncer.run(() => void this.ask());
  }

  dispose(): void {
    this.supersede();
  }

  private supersede(): number {
    this.debouncer.cancel();
    this.inflight?.abort();
    this.inflight = undefined;
    return ++this.sequence;
  }

  private async ask(): Promise<void> {
    const place = this.place;
    if (!place) return;
    if (this.deps.visible && !this.deps.visible()) {
      this.askedKey = undefined;
      return;
    }
    const sequence = this.supersede();
    const inflight = (this.inflight = new AbortController());
    this.askedKey = key(place);
    if (this.state.kind !== "hits" || this.state.path !== place.path) this.set({ kind: "loading", path: place.path });
    try {
      const result = await this.deps.related(place, inflight.signal);
      if (sequence !== this.sequence) return;
      this.inflight = undefined;
      this.set(
        result.hits.length > 0
          ? { kind: "hits", path: place.path, hits: result.hits, caveat: resultCaveat(result) }
          : { kind: "empty", path: place.path, indexing: result.indexing },
      );
    } catch (error) {
      if (sequence !== this.sequence) return;
      this.inflight = undefined;
      this.askedKey = undefined;
      this.set({ kind: "error", path: place.path, message: error instanceof Error ? error.message : String(error) });
    }
  }

  private set(state: RelatedState): void {
    this.state = state;
    this.deps.render(state);
  }
}

function key(place: CursorPlace): string {
  return `${place.uri}:${place.position.line}`;
}
