/**
 * One `botbin lsp` child process and the LSP conversation with it over stdio (vscode-jsonrpc; Obsidian
 * has no language client). Node only, no Obsidian API: the integration test drives this same class
 * against the real server. The plugin forwards vault events itself, so it declares that it can watch
 * files (the server then starts no watcher of its own) and accepts the server's watch registration.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import {
  BotbinApi,
  type ProgressTracker,
  RecentLines,
  type ServerConnection,
  type WorkDoneValue,
  within,
} from "@botbin/client";
import { ERROR, type ErrorReport, type ServerOptions } from "@botbin/protocol";
import {
  createMessageConnection,
  type MessageConnection,
  ProgressType,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import { describeCommand, type ServerCommand } from "../core/settings";

export interface ConnectionDeps {
  command: ServerCommand;
  /** The vault's folder on disk: the one workspace folder, and the server's working folder. */
  vaultPath: string;
  vaultName: string;
  /** The settings, and the passphrase of an encrypted store if the user gave one (never logged). */
  initializationOptions: ServerOptions;
  progress: ProgressTracker;
  /** `window/showMessage` from the server (1 error, 2 warning, 3 info, 4 log). */
  onMessage(type: number, message: string): void;
  /** `botbin/error` from the server: a folder's failure with its kind (sent before its `window/showMessage`). */
  onError?(report: ErrorReport): void;
  /** A line for the developer console: the server's stderr and the plugin's own notes. */
  log(line: string): void;
}

/** How long a failed start or a stop waits for the process to end, in milliseconds. */
const EXIT_WAIT_MS = 2000;
const workDoneProgress = new ProgressType<WorkDoneValue>();

export class BotbinConnection implements ServerConnection {
  readonly api: BotbinApi;
  private readonly connection: MessageConnection;
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private readonly spawned: Promise<boolean>;
  private readonly stderr = new RecentLines();
  private spawnError: Error | undefined;
  private stopping = false;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly deps: ConnectionDeps,
    onClosed: () => void,
  ) {
    const { command, args } = deps.command;
    this.child = spawn(command, args, {
      cwd: deps.vaultPath,
      env: { ...process.env, PYTHONUNBUFFERED: "1" },
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    this.exited = new Promise((resolve) => {
      this.child.once("close", (code) => resolve(code));
      this.child.once("error", (error) => {
        this.spawnError = new Error(`cannot run ${describeCommand(deps.command)}: ${error.message}`);
        resolve(null);
      });
    });
    // nothing is written before the process runs: a write to a process that never started fails in
    // vscode-jsonrpc as an unhandled rejection
    this.spawned = new Promise((resolve) => {
      this.child.once("spawn", () => resolve(true));
      void this.exited.then(() => resolve(false));
    });
    this.child.stderr?.setEncoding("utf8").on("data", (text: string) => this.serverLog(text));
    void this.exited.then(() => {
      if (!this.stopping) onClosed();
    });
    this.connection = createMessageConnection(
      new StreamMessageReader(this.child.stdout!),
      new StreamMessageWriter(this.child.stdin!),
    );
    this.connection.onError(([error]) => deps.log(`connection error: ${error.message}`));
    this.connection.onRequest("window/workDoneProgress/create", ({ token }: { token: string | number }) => {
      const subscription = this.connection.onProgress(workDoneProgress, token, (value) => {
        deps.progress.update(token, value);
        if (value.kind === "end") subscription.dispose();
      });
      return null;
    });
    // client/registerCapability (the `**/*.md` watch), workspace/configuration and the like: accepted
    this.connection.onRequest((method) => {
      deps.log(`server request ${method}: answered null`);
      return null;
    });
    this.connection.onNotification("window/showMessage", ({ type, message }: { type: number; message: string }) =>
      deps.onMessage(type, message),
    );
    this.connection.onNotification(ERROR, (report: ErrorReport) => deps.onError?.(report));
    this.connection.onNotification("window/logMessage", ({ message }: { message: string }) => deps.log(message));
    this.connection.onNotification(() => undefined); // publishDiagnostics: Obsidian has nowhere to show them
    this.connection.listen();
    this.api = new BotbinApi(this.connection);
  }

  /** Resolves once the server answered `initialize`; rejects with the server's own error when it has one. */
  async start(): Promise<void> {
    const root = pathToFileURL(this.deps.vaultPath).href;
    if (!(await this.spawned)) throw this.spawnError ?? new Error(`cannot run ${describeCommand(this.deps.command)}`);
    try {
      await Promise.race([
        this.connection.sendRequest("initialize", {
          processId: process.pid,
          clientInfo: { name: "botbin-obsidian" },
          rootUri: root,
          workspaceFolders: [{ uri: root, name: this.deps.vaultName }],
          initializationOptions: this.deps.initializationOptions,
          capabilities: {
            general: { positionEncodings: ["utf-16"] },
            window: { workDoneProgress: true, showMessage: {} },
            workspace: {
              workspaceFolders: true,
              didChangeConfiguration: { dynamicRegistration: false },
              didChangeWatchedFiles: { dynamicRegistration: true },
            },
            textDocument: { synchronization: { didSave: true, dynamicRegistration: false } },
          },
        }),
        this.exited.then((code) => Promise.reject(new Error(`the server exited with code ${code}`))),
      ]);
      await this.connection.sendNotification("initialized", {});
    } catch (error) {
      if (this.spawnError) throw this.spawnError;
      await within(this.exited, EXIT_WAIT_MS);
      throw new Error(this.lastError() ?? (error instanceof Error ? error.message : String(error)));
    }
  }

  /** Sends a notification; dropped (and logged) when the connection is gone. */
  notify(method: string, params: unknown): void {
    const dropped = (error: unknown): void => this.deps.log(`${method} dropped: ${String(error)}`);
    try {
      this.connection.sendNotification(method, params).catch(dropped);
    } catch (error) {
      dropped(error); // a closed connection throws at once
    }
  }

  /** Sends the botbin.toml keys (and the passphrase) again after a setting or the passphrase changed. */
  sendSettings(settings: { settings: { botbin: ServerOptions } }): void {
    this.notify("workspace/didChangeConfiguration", settings);
  }

  /** `shutdown` and `exit`, then a signal if the server is still there; safe in any state, and more than once. */
  stop(): Promise<void> {
    this.stopped ??= this.halt();
    return this.stopped;
  }

  private async halt(): Promise<void> {
    this.stopping = true;
    if (this.child.exitCode === null && !this.spawnError) {
      await within(
        this.connection.sendRequest("shutdown").catch(() => undefined),
        EXIT_WAIT_MS,
      );
      await this.connection.sendNotification("exit").catch(() => undefined);
    }
    if ((await within(this.exited, EXIT_WAIT_MS)) === undefined && this.child.exitCode === null) this.child.kill();
    this.connection.dispose();
  }

  /** The last error-like line the server wrote to stderr (a Python traceback's last line). */
  lastError(): string | undefined {
    return this.stderr.lastError();
  }

  private serverLog(text: string): void {
    this.stderr.add(text);
    for (const line of text.split(/\r?\n/)) if (line.trim()) this.deps.log(`server: ${line}`);
  }
}
