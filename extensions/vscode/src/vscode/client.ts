/**
 * One `botbin lsp` process behind a vscode-languageclient LanguageClient. The Supervisor owns restarts, so
 * the client never restarts by itself and never shows its own error pop-ups (the session says what failed).
 * The process is spawned here, so that a failed start can wait for the server's last words on stderr.
 * The server's `window/showMessage` goes to the session, which turns an encrypted store's error into an
 * "Enter passphrase" prompt.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  type FeatureState,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  ShowMessageNotification,
  type StaticFeature,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
} from "vscode-languageclient/node";
import { ERROR, type ErrorReport, SERVER_NAME } from "@botbin/protocol";
import { BotbinApi, type ProgressTracker, type ServerConnection, within } from "@botbin/client";
import { describeCommand, type ServerCommand } from "../core/serverCommand";
import { configurationChange, type ExtensionSettings, initializationOptions } from "../core/settings";
import type { ServerLog } from "./output";

export interface ClientDeps {
  command: ServerCommand;
  /** The current settings (read at each hover, so hover on/off applies at once). */
  settings(): ExtensionSettings;
  /** The passphrase of an encrypted store, if the user gave one (read when the server starts). */
  passphrase(): string | undefined;
  /** A `window/showMessage` of the server (type: 1 error, 2 warning, 3 info, 4 log). */
  onMessage(type: number, message: string): void;
  /** `botbin/error` of the server: a folder's failure with its kind (sent before its `window/showMessage`). */
  onError(report: ErrorReport): void;
  log: ServerLog;
  progress: ProgressTracker;
  /** Working folder of the server process. */
  cwd: string | undefined;
}

/** How long a failed start waits for the process to end and its stderr to arrive, in milliseconds. */
const LAST_WORDS_MS = 1000;

/**
 * A LanguageClient that logs errors instead of showing them (the session shows one clear message), and
 * whose stop() never rejects: after a failed initialize the client stops itself and, unheld, such a
 * rejection would surface as an unhandled one.
 */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification?: boolean | "force"): void {
    super.error(message, data, showNotification === "force" ? false : showNotification);
  }

  override async stop(timeout?: number): Promise<void> {
    try {
      await super.stop(timeout);
    } catch (error) {
      this.info(`stop: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

export class BotbinConnection implements ServerConnection {
  readonly client: LanguageClient;
  readonly api: BotbinApi;
  private process: ChildProcess | undefined;
  /** Resolves with the exit code (null: killed by a signal) once the process ended and its pipes closed. */
  private closed: Promise<number | null> = new Promise(() => undefined);
  /** Why the process could not be spawned at all (no such file, not executable). */
  private spawnError: Error | undefined;
  /** Settles when the current client.start() has settled. */
  private starting: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: ClientDeps,
    onClosed: () => void,
  ) {
    const options: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", language: "markdown" }],
      outputChannel: deps.log.channel,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // a function: the client keeps no copy of the passphrase once `initialize` was sent
      initializationOptions: () => initializationOptions(deps.settings(), deps.passphrase()),
      initializationFailedHandler: () => false,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        // a close during initialize must wait for start() to settle: the client forgets its start
        // promise on close, and start() would then resolve although the server never started
        closed: async () => {
          onClosed();
          await this.starting;
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        provideHover: (document, position, token, next) =>
          deps.settings().hoverEnabled ? next(document, position, token) : undefined,
      },
    };
    this.client = new QuietLanguageClient(SERVER_NAME, "botbin", () => this.spawnServer(), options);
    this.client.registerFeature(new IndexingProgressFeature(this.client, deps.progress));
    // set before start: replaces the client's own pop-up handler once the server is initialized
    this.client.onNotification(ShowMessageNotification.type, ({ type, message }) => deps.onMessage(type, message));
    this.client.onNotification(ERROR, (report: ErrorReport) => deps.onError(report));
    this.api = new BotbinApi(this.client);
  }

  /** Resolves once the server answered `initialize`; rejects with the server's own error when it has one. */
  async start(): Promise<void> {
    const started = this.client.start();
    this.starting = started.catch(() => undefined);
    try {
      await started;
      if (!this.client.isRunning()) throw new Error("the connection closed during initialize");
    } catch (error) {
      if (this.spawnError) throw this.spawnError;
      const code = await within(this.closed, LAST_WORDS_MS);
      const exited = typeof code === "number" ? `the server exited with code ${code}` : undefined;
      throw new Error(this.deps.log.lastError() ?? exited ?? (error instanceof Error ? error.message : String(error)));
    }
  }

  /** Shuts the server down (politely, then by signal) and frees the client. */
  async stop(): Promise<void> {
    await this.client.dispose(2000).catch(() => undefined);
    const child = this.process;
    if (child && (await within(this.closed, LAST_WORDS_MS)) === undefined) child.kill();
  }

  /** Sends the botbin.toml keys (and the passphrase) again after a setting or the passphrase changed. */
  async sendSettings(settings: ExtensionSettings, passphrase: string | undefined): Promise<void> {
    const change = configurationChange(settings, passphrase);
    await this.client.sendNotification(DidChangeConfigurationNotification.type, change);
  }

  private spawnServer(): Promise<ChildProcess> {
    const { command, args } = this.deps.command;
    const child = spawn(command, args, { cwd: this.deps.cwd, env: { ...process.env, PYTHONUNBUFFERED: "1" } });
    this.process = child;
    this.closed = new Promise((resolve) => child.once("close", (code) => resolve(code)));
    return new Promise((resolve, reject) => {
      child.once("spawn", () => resolve(child));
      child.once("error", (error) => {
        this.spawnError = new Error(`cannot run ${describeCommand(this.deps.command)}: ${error.message}`);
        reject(this.spawnError);
      });
    });
  }
}

/**
 * Takes over `window/workDoneProgress/create` (registered after the built-in progress feature, so its
 * handler wins) and feeds botbin's indexing reports to the status bar instead of a progress pop-up.
 */
class IndexingProgressFeature implements StaticFeature {
  constructor(
    private readonly client: LanguageClient,
    private readonly tracker: ProgressTracker,
  ) {}

  fillClientCapabilities(capabilities: { window?: { workDoneProgress?: boolean } }): void {
    capabilities.window = { ...capabilities.window, workDoneProgress: true };
  }

  initialize(): void {
    this.client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      const subscription = this.client.onProgress(WorkDoneProgress.type, token, (value) => {
        this.tracker.update(token, value);
        if (value.kind === "end") subscription.dispose();
      });
    });
  }

  getState(): FeatureState {
    return { kind: "static" };
  }

  clear(): void {
    this.tracker.clear();
  }
}
