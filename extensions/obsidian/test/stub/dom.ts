// The DOM part of the `obsidian` stand-in (./obsidian.ts): elements with Obsidian's helpers, no browser.

export type Listener = (...args: any[]) => unknown;

/** An HTMLElement with Obsidian's helpers (createDiv, setText, ...), without a DOM. */
export class FakeElement {
  children: FakeElement[] = [];
  text = "";
  readonly classes = new Set<string>();
  tooltip = "";
  /** An input's type ("password"). */
  type = "";
  focused = false;
  private readonly listeners = new Map<string, Listener[]>();

  constructor(readonly tag = "div") {}

  createEl(tag: string, options: { text?: string; cls?: string } = {}): FakeElement {
    const child = new FakeElement(tag);
    if (options.text !== undefined) child.text = options.text;
    if (options.cls) child.addClass(...options.cls.split(/\s+/));
    this.children.push(child);
    return child;
  }
  createDiv(options: { text?: string; cls?: string } = {}): FakeElement {
    return this.createEl("div", options);
  }
  empty(): void {
    this.children = [];
    this.text = "";
  }
  setText(text: string): void {
    this.text = text;
  }
  addClass(...classes: string[]): void {
    for (const c of classes) this.classes.add(c);
  }
  toggleClass(cls: string, on: boolean): void {
    if (on) this.classes.add(cls);
    else this.classes.delete(cls);
  }
  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  click(): void {
    this.fire("click", {});
  }
  /** Test helper: an event reaches the element's listeners. */
  fire(type: string, event: unknown): void {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }
  focus(): void {
    this.focused = true;
  }
  /** Every text below this element, depth first, one string per element with text. */
  get texts(): string[] {
    return [...(this.text ? [this.text] : []), ...this.children.flatMap((c) => c.texts)];
  }
  /** Elements below this one (itself included) with the class. */
  find(cls: string): FakeElement[] {
    return [...(this.classes.has(cls) ? [this] : []), ...this.children.flatMap((c) => c.find(cls))];
  }
}

export function setTooltip(el: FakeElement, tooltip: string): void {
  el.tooltip = tooltip;
}
