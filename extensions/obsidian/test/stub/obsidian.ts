// A small stand-in for the `obsidian` module (which ships types only): just what the plugin uses, with
// helpers for tests to drive it. Bundled in place of `obsidian` by run-tests.mjs --alias.

import { FakeElement, type Listener } from "./dom";
import type { PluginSettingTab } from "./ui";

export * from "./dom";
export * from "./ui";

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
