// A QuickPick stand-in: a test types into it, reads its items and accepts the active one.
import type { Disposable, PickView } from "../../src/core/searchController";
import type { HitItem } from "../../src/core/hits";

type Listener<T> = (value: T) => unknown;

export class Emitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }
  get size(): number {
    return this.listeners.length;
  }
}

export class FakePick implements PickView {
  value = "";
  busy = false;
  title: string | undefined;
  placeholder: string | undefined;
  matchOnDescription = true;
  matchOnDetail = true;
  shown = false;
  disposed = false;
  activeItems: readonly HitItem[] = [];
  selectedItems: readonly HitItem[] = [];
  private itemList: readonly HitItem[] = [];
  readonly changeValue = new Emitter<string>();
  readonly accept = new Emitter<void>();
  readonly hideEvent = new Emitter<void>();
  onDidChangeValue = this.changeValue.event;
  onDidAccept = this.accept.event;
  onDidHide = this.hideEvent.event;

  get items(): readonly HitItem[] {
    return this.itemList;
  }
  set items(items: readonly HitItem[]) {
    this.itemList = items;
    this.activeItems = items.slice(0, 1); // as VS Code does: the first item becomes active
  }

  /** What the user sees happen when they type `text`. */
  type(text: string): void {
    this.value = text;
    this.changeValue.fire(text);
  }

  show(): void {
    this.shown = true;
  }
  hide(): void {
    if (!this.shown) return;
    this.shown = false;
    this.hideEvent.fire();
  }
  dispose(): void {
    this.disposed = true;
  }
}
