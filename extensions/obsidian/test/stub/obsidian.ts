// A small stand-in for the `obsidian` module (which ships types only): just what the plugin uses, with
// helpers for tests to drive it. Bundled in place of `obsidian` by run-tests.mjs --alias.

type Listener = (...args: any[]) => unknown;

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

export class Notice {
  static shown: string[] = [];
  static all: Notice[] = [];
  readonly noticeEl = new FakeElement();
  constructor(
    readonly message: string,
    readonly duration?: number,
  ) {
    Notice.shown.push(message);
    Notice.all.push(this);
  }
}

export interface EventRef {
  owner: Events;
  name: string;
  listener: Listener;
}

export class Events {
  private readonly handlers = new Map<string, Listener[]>();
  on(name: string, listener: Listener): EventRef {
    this.handlers.set(name, [...(this.handlers.get(name) ?? []), listener]);
    return { owner: this, name, listener };
  }
  offref(ref: EventRef): void {
    this.handlers.set(
      ref.name,
      (this.handlers.get(ref.name) ?? []).filter((l) => l !== ref.listener),
    );
  }
  trigger(name: string, ...args: unknown[]): void {
    for (const listener of this.handlers.get(name) ?? []) listener(...args);
  }
  listenerCount(name: string): number {
    return this.handlers.get(name)?.length ?? 0;
  }
}

export class TAbstractFile {
  constructor(readonly path: string) {}
}
export class TFile extends TAbstractFile {
  get extension(): string {
    return this.path.split(".").pop() ?? "";
  }
}
export class TFolder extends TAbstractFile {}

export class FileSystemAdapter {
  constructor(private readonly basePath: string) {}
  getBasePath(): string {
    return this.basePath;
  }
}

export class Vault extends Events {
  readonly files = new Map<string, TFile>();
  constructor(
    readonly adapter: unknown,
    private readonly name = "vault",
  ) {
    super();
  }
  getName(): string {
    return this.name;
  }
  getFileByPath(path: string): TFile | null {
    return this.files.get(path) ?? null;
  }
  add(path: string): TFile {
    const file = new TFile(path);
    this.files.set(path, file);
    return file;
  }
}

export class FakeEditor {
  cursor = { line: 0, ch: 0 };
  selection = "";
  scrolled: unknown[] = [];
  getCursor(): { line: number; ch: number } {
    return this.cursor;
  }
  setCursor(pos: { line: number; ch: number }): void {
    this.cursor = pos;
  }
  getSelection(): string {
    return this.selection;
  }
  scrollIntoView(range: unknown, center?: boolean): void {
    this.scrolled.push({ range, center });
  }
}

export class View {
  readonly app: App;
  readonly containerEl = new FakeElement();
  constructor(readonly leaf: WorkspaceLeaf) {
    this.app = leaf.app;
  }
}

export class ItemView extends View {
  readonly contentEl = new FakeElement();
  async onOpen(): Promise<void> {}
  getIcon(): string {
    return "document";
  }
}

export class MarkdownView extends View {
  readonly editor = new FakeEditor();
  constructor(
    leaf: WorkspaceLeaf,
    readonly file: TFile | null,
  ) {
    super(leaf);
  }
}

export class WorkspaceLeaf {
  view: View | undefined;
  openedWith: unknown;
  constructor(readonly app: App) {}
  async openFile(file: TFile, state?: unknown): Promise<void> {
    this.view = new MarkdownView(this, file);
    this.openedWith = state;
    this.app.workspace.activeLeaf = this;
  }
  async setViewState(state: { type: string }): Promise<void> {
    const create = this.app.workspace.viewCreators.get(state.type);
    if (!create) throw new Error(`no view ${state.type}`);
    const view = create(this);
    this.view = view;
    if (view instanceof ItemView) await view.onOpen();
  }
}

export class Workspace extends Events {
  activeLeaf: WorkspaceLeaf | undefined;
  readonly leaves: WorkspaceLeaf[] = [];
  readonly viewCreators = new Map<string, (leaf: WorkspaceLeaf) => View>();
  private ready: Listener[] = [];
  layoutReady = false;
  constructor(private readonly app: App) {
    super();
  }
  onLayoutReady(callback: Listener): void {
    if (this.layoutReady) callback();
    else this.ready.push(callback);
  }
  /** Test helper: the layout is ready. */
  finishLayout(): void {
    this.layoutReady = true;
    for (const callback of this.ready.splice(0)) callback();
  }
  getActiveViewOfType<T>(type: abstract new (...args: any[]) => T): T | null {
    const view = this.activeLeaf?.view;
    return view instanceof type ? view : null;
  }
  getLeavesOfType(type: string): WorkspaceLeaf[] {
    return this.leaves.filter(
      (leaf) => (leaf.view as { getViewType?(): string } | undefined)?.getViewType?.() === type,
    );
  }
  getLeaf(): WorkspaceLeaf {
    const leaf = new WorkspaceLeaf(this.app);
    this.leaves.push(leaf);
    return leaf;
  }
  getRightLeaf(): WorkspaceLeaf {
    return this.getLeaf();
  }
  async revealLeaf(): Promise<void> {}
}

export class App {
  readonly workspace: Workspace;
  readonly vault: Vault;
  constructor(vaultPath = "/vault") {
    this.vault = new Vault(new FileSystemAdapter(vaultPath));
    this.workspace = new Workspace(this);
  }
}

export class Component {
  private readonly refs: EventRef[] = [];
  private loaded = false;
  registerEvent(ref: EventRef): void {
    this.refs.push(ref);
  }
  async load(): Promise<void> {
    this.loaded = true;
    await this.onload();
  }
  unload(): void {
    if (!this.loaded) return;
    this.loaded = false;
    for (const ref of this.refs.splice(0)) ref.owner.offref(ref);
    this.onunload();
  }
  onload(): void | Promise<void> {}
  onunload(): void {}
}

export interface Command {
  id: string;
  name: string;
  callback?: () => unknown;
  editorCallback?: (editor: FakeEditor, view: unknown) => unknown;
}

export class Plugin extends Component {
  data: unknown = null;
  saved: unknown[] = [];
  readonly commands = new Map<string, Command>();
  readonly ribbon: { icon: string; title: string; callback: Listener }[] = [];
  readonly statusBarItems: FakeElement[] = [];
  readonly settingTabs: PluginSettingTab[] = [];
  readonly editorExtensions: unknown[] = [];
  constructor(
    readonly app: App,
    readonly manifest: unknown = { id: "botbin" },
  ) {
    super();
  }
  async loadData(): Promise<unknown> {
    return this.data;
  }
  async saveData(data: unknown): Promise<void> {
    this.data = structuredClone(data);
    this.saved.push(this.data);
  }
  addStatusBarItem(): FakeElement {
    const el = new FakeElement();
    this.statusBarItems.push(el);
    return el;
  }
  addRibbonIcon(icon: string, title: string, callback: Listener): FakeElement {
    this.ribbon.push({ icon, title, callback });
    return new FakeElement();
  }
  addCommand(command: Command): Command {
    this.commands.set(command.id, command);
    return command;
  }
  addSettingTab(tab: PluginSettingTab): void {
    this.settingTabs.push(tab);
  }
  registerView(type: string, create: (leaf: WorkspaceLeaf) => View): void {
    this.app.workspace.viewCreators.set(type, create);
  }
  registerEditorExtension(extension: unknown): void {
    this.editorExtensions.push(extension);
  }
}

export class Modal {
  isOpen = false;
  readonly titleEl = new FakeElement();
  readonly contentEl = new FakeElement();
  constructor(readonly app: App) {}
  open(): void {
    this.isOpen = true;
    this.onOpen();
  }
  close(): void {
    this.isOpen = false;
    this.onClose();
  }
  onOpen(): void {}
  onClose(): void {}
}

export abstract class SuggestModal<T> extends Modal {
  limit = 100;
  emptyStateText = "";
  placeholder = "";
  instructions: { command: string; purpose: string }[] = [];
  /** What the list shows now (the last suggestions a test awaited). */
  shown: T[] = [];
  setPlaceholder(placeholder: string): void {
    this.placeholder = placeholder;
  }
  setInstructions(instructions: { command: string; purpose: string }[]): void {
    this.instructions = instructions;
  }
  abstract getSuggestions(query: string): T[] | Promise<T[]>;
  abstract renderSuggestion(value: T, el: FakeElement): void;
  abstract onChooseSuggestion(item: T, evt: unknown): void;
  /** Test helper: what one row renders as. */
  rendered(value: T): FakeElement {
    const el = new FakeElement();
    this.renderSuggestion(value, el);
    return el;
  }
  /** Test helper: Enter on row `index` (Obsidian closes the modal, then calls onChooseSuggestion). */
  choose(index: number): void {
    const item = this.shown[index];
    if (item === undefined) throw new Error(`no row ${index}`);
    this.close();
    this.onChooseSuggestion(item, {});
  }
}

export class PluginSettingTab {
  readonly containerEl = new FakeElement();
  constructor(
    readonly app: App,
    readonly plugin: Plugin,
  ) {}
  display(): void {}
  hide(): void {}
}

export class TextComponent {
  value = "";
  placeholder = "";
  readonly inputEl = new FakeElement("input");
  private listener: ((value: string) => unknown) | undefined;
  setPlaceholder(placeholder: string): this {
    this.placeholder = placeholder;
    return this;
  }
  setValue(value: string): this {
    this.value = value;
    return this;
  }
  onChange(listener: (value: string) => unknown): this {
    this.listener = listener;
    return this;
  }
  /** Test helper: the user types `value` into the box. */
  input(value: string): void {
    this.value = value;
    this.listener?.(value);
  }
}
export class TextAreaComponent extends TextComponent {}

export class ButtonComponent {
  text = "";
  cta = false;
  private listener: (() => unknown) | undefined;
  setButtonText(text: string): this {
    this.text = text;
    return this;
  }
  setCta(): this {
    this.cta = true;
    return this;
  }
  onClick(listener: () => unknown): this {
    this.listener = listener;
    return this;
  }
  /** Test helper: the user clicks the button. */
  click(): void {
    this.listener?.();
  }
}

export class Setting {
  static all: Setting[] = [];
  name = "";
  desc = "";
  readonly components: TextComponent[] = [];
  readonly buttons: ButtonComponent[] = [];
  constructor(readonly containerEl: FakeElement) {
    Setting.all.push(this);
  }
  setName(name: string): this {
    this.name = name;
    return this;
  }
  setDesc(desc: string): this {
    this.desc = desc;
    return this;
  }
  addText(build: (text: TextComponent) => unknown): this {
    const text = new TextComponent();
    this.components.push(text);
    build(text);
    return this;
  }
  addTextArea(build: (text: TextAreaComponent) => unknown): this {
    const text = new TextAreaComponent();
    this.components.push(text);
    build(text);
    return this;
  }
  addButton(build: (button: ButtonComponent) => unknown): this {
    const button = new ButtonComponent();
    this.buttons.push(button);
    build(button);
    return this;
  }
}
