// A small stand-in for the `vscode` module, so that adapter code (and the bundled extension) runs under
// node's test runner. The tests alias `vscode` to this file; `stub` records what the extension did.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { Emitter, FakePick } from "../helpers/fakePick";

type Listener = (...args: any[]) => unknown;

export class Disposable {
  constructor(private readonly callOnDispose: () => unknown = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  dispose(): void {
    this.callOnDispose();
  }
}

export class EventEmitter<T> {
  private readonly emitter = new Emitter<T>();
  readonly event = (listener: (value: T) => unknown) => this.emitter.event(listener);
  fire(value: T): void {
    this.emitter.fire(value);
  }
  dispose(): void {}
}

export class CancellationError extends Error {}
export class CancellationTokenSource {
  token = { isCancellationRequested: false, onCancellationRequested: new EventEmitter<void>().event };
  cancel(): void {
    this.token.isCancellationRequested = true;
  }
  dispose(): void {}
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(startLine: number, startCharacter: number, endLine: number, endCharacter: number) {
    this.start = new Position(startLine, startCharacter);
    this.end = new Position(endLine, endCharacter);
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly fragment = "",
  ) {}
  static parse(value: string): Uri {
    const match = /^([a-z][a-z0-9+.-]*):\/\/([^#]*)(?:#(.*))?$/i.exec(value);
    if (!match) throw new Error(`stub Uri.parse: ${value}`);
    return new Uri(match[1] as string, decodeURIComponent(match[2] as string), match[3] ?? "");
  }
  static file(path: string): Uri {
    return new Uri("file", path);
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.path}${this.fragment ? `#${this.fragment}` : ""}`;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export class StubStatusBarItem {
  text = "";
  tooltip: string | undefined;
  name: string | undefined;
  command: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible = false;
  constructor(
    readonly id: string,
    readonly alignment: StatusBarAlignment,
    readonly priority: number,
  ) {}
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    this.visible = false;
  }
}

/** ExtensionContext.secrets: a Map in memory instead of the system keychain. */
export class FakeSecretStorage {
  readonly values = new Map<string, string>();
  private readonly changed = new EventEmitter<{ key: string }>();
  readonly onDidChange = this.changed.event;
  async get(key: string): Promise<string | undefined> {
    return this.values.get(key);
  }
  async store(key: string, value: string): Promise<void> {
    this.values.set(key, value);
    this.changed.fire({ key });
  }
  async delete(key: string): Promise<void> {
    this.values.delete(key);
    this.changed.fire({ key });
  }
}

export interface Message {
  severity: "info" | "warning" | "error";
  text: string;
  actions: string[];
}

/** What the extension did, and what the "user" answers; reset between tests with `stub.reset()`. */
export const stub = {
  config: {} as Record<string, unknown>,
  messages: [] as Message[],
  /** The action the user picks for the next message (undefined: dismissed). */
  answer: undefined as string | undefined,
  commands: new Map<string, Listener>(),
  executed: [] as { command: string; args: unknown[] }[],
  opened: [] as { uri: Uri; options: any }[],
  quickPicks: [] as FakePick[],
  /** What showQuickPick resolves with: a function of the offered items. */
  pickAnswer: (items: readonly any[]): any => items[0],
  offered: [] as { items: readonly any[]; options: any }[],
  /** What the user types into the next input boxes, in order (none left: cancelled). */
  inputAnswers: [] as string[],
  inputBoxes: [] as any[],
  secrets: new FakeSecretStorage(),
  statusItems: [] as StubStatusBarItem[],
  output: [] as string[],
  extensions: new Map<string, any>(),
  hoverProviders: [] as { selector: unknown; provider: { provideHover: Listener } }[],
  workspaceFolders: undefined as { uri: Uri; name: string; index: number }[] | undefined,
  configListeners: new Emitter<{ affectsConfiguration(section: string): boolean }>(),
  reset(): void {
    this.config = {};
    this.messages = [];
    this.answer = undefined;
    this.commands.clear();
    this.executed = [];
    this.opened = [];
    this.quickPicks = [];
    this.pickAnswer = (items) => items[0];
    this.offered = [];
    this.inputAnswers = [];
    this.inputBoxes = [];
    this.secrets = new FakeSecretStorage();
    this.statusItems = [];
    this.output = [];
    this.extensions.clear();
    this.hoverProviders = [];
    this.workspaceFolders = undefined;
  },
};

function message(severity: Message["severity"]) {
  return (text: string, ...rest: any[]): Promise<string | undefined> => {
    const actions = rest.filter((r): r is string => typeof r === "string");
    stub.messages.push({ severity, text, actions });
    return Promise.resolve(actions.includes(stub.answer as string) ? stub.answer : undefined);
  };
}

export const window = {
  createOutputChannel(name: string) {
    let partial = "";
    let closed = false;
    const push = (text: string) => {
      if (closed) throw new Error("Channel has been closed"); // as VS Code's own channel does
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      stub.output.push(...lines);
    };
    return {
      name,
      append: push,
      appendLine: (line: string) => push(`${line}\n`),
      replace: () => undefined,
      clear: () => undefined,
      show: () => undefined,
      hide: () => undefined,
      dispose: () => {
        closed = true;
      },
    };
  },
  createStatusBarItem(id: string, alignment: StatusBarAlignment, priority: number) {
    const item = new StubStatusBarItem(id, alignment, priority);
    stub.statusItems.push(item);
    return item;
  },
  createQuickPick() {
    const pick = new FakePick();
    stub.quickPicks.push(pick);
    return pick;
  },
  async showQuickPick(items: readonly any[], options: any) {
    stub.offered.push({ items, options });
    return stub.pickAnswer(items);
  },
  async showInputBox(options: any): Promise<string | undefined> {
    stub.inputBoxes.push(options);
    const answer = stub.inputAnswers.shift();
    if (answer !== undefined && options?.validateInput?.(answer)) return undefined;
    return answer;
  },
  async showTextDocument(uri: Uri, options: any) {
    stub.opened.push({ uri, options });
    return {};
  },
  showInformationMessage: message("info"),
  showWarningMessage: message("warning"),
  showErrorMessage: message("error"),
  async withProgress<T>(_options: unknown, task: () => Promise<T>): Promise<T> {
    return task();
  },
  activeTextEditor: undefined as any,
};

export const workspace = {
  getConfiguration(section?: string) {
    const prefix = section ? `${section}.` : "";
    return {
      get: (key: string, fallback?: unknown) => stub.config[prefix + key] ?? fallback,
      has: (key: string) => prefix + key in stub.config,
      inspect: () => undefined,
      update: async () => undefined,
    };
  },
  onDidChangeConfiguration: (listener: Listener) => stub.configListeners.event(listener),
  onDidSaveTextDocument: (_listener: Listener) => new Disposable(),
  onDidOpenTextDocument: (_listener: Listener) => new Disposable(),
  onDidCloseTextDocument: (_listener: Listener) => new Disposable(),
  onDidChangeTextDocument: (_listener: Listener) => new Disposable(),
  onDidChangeWorkspaceFolders: (_listener: Listener) => new Disposable(),
  get workspaceFolders() {
    return stub.workspaceFolders;
  },
  textDocuments: [] as unknown[],
};

export class MarkdownString {
  constructor(readonly value = "") {}
}

export class Hover {
  readonly contents: unknown[];
  constructor(
    contents: unknown,
    readonly range?: Range,
  ) {
    this.contents = Array.isArray(contents) ? contents : [contents];
  }
}

export const languages = {
  registerHoverProvider(selector: unknown, provider: { provideHover: Listener }): Disposable {
    stub.hoverProviders.push({ selector, provider });
    return new Disposable(() => (stub.hoverProviders = stub.hoverProviders.filter((p) => p.provider !== provider)));
  },
  createDiagnosticCollection: () => ({
    set: () => undefined,
    delete: () => undefined,
    clear: () => undefined,
    dispose: () => undefined,
  }),
};

export const commands = {
  registerCommand(id: string, run: Listener): Disposable {
    if (stub.commands.has(id)) throw new Error(`command '${id}' already exists`);
    stub.commands.set(id, run);
    return new Disposable(() => stub.commands.delete(id));
  },
  async executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    stub.executed.push({ command, args });
    return stub.commands.get(command)?.(...args);
  },
};

export const extensions = {
  getExtension: (id: string) => stub.extensions.get(id),
};

export const env = { language: "en", appName: "stub", openExternal: async () => false };
export const version = "1.85.0";

// Base classes that vscode-languageclient extends when its modules load; never used by these tests.
class Placeholder {
  constructor(..._args: unknown[]) {}
}
export class CallHierarchyItem extends Placeholder {}
export class CodeAction extends Placeholder {}
export class CodeLens extends Placeholder {}
export class CompletionItem extends Placeholder {}
export class Diagnostic extends Placeholder {}
export class DocumentLink extends Placeholder {}
export class InlayHint extends Placeholder {}
export class SymbolInformation extends Placeholder {}
export class TypeHierarchyItem extends Placeholder {}
export const CodeActionKind = {
  Empty: "",
  QuickFix: "quickfix",
  Refactor: "refactor",
  RefactorExtract: "refactor.extract",
  RefactorInline: "refactor.inline",
  RefactorRewrite: "refactor.rewrite",
  Source: "source",
  SourceOrganizeImports: "source.organizeImports",
  SourceFixAll: "source.fixAll",
};
