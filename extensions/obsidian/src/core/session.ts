/**
 * The plugin's running state, without Obsidian: the supervised server (restarted with backoff when it
 * dies), indexing progress, the last status, and the vault events forwarded to it. The Obsidian side
 * hands in how to connect and how to show things; tests hand in fakes. When the server says the store is
 * encrypted, the session offers (once per try) to enter the passphrase.
 */
import {
  type BotbinApi,
  type Clock,
  Debouncer,
  CoveredMessages,
  lockedError,
  type LockedError,
  lockedReason,
  PassphraseOffer,
  ProgressTracker,
  RestartPolicy,
  type ServerConnection,
  type ServerState,
  Supervisor,
} from "@botbin/client";
import type { ErrorReport, ServerOptions, StatusResult } from "@botbin/protocol";
import { failureMessage, notRunningMessage, statusView, type StatusView } from "./statusModel";
import { VaultSync } from "./vaultSync";

/** A started server as the session needs it (node/connection.ts is the real one). */
export interface PluginConnection extends ServerConnection {
  readonly api: BotbinApi;
  notify(method: string, params: unknown): void;
  sendSettings(change: { settings: { botbin: ServerOptions } }): void;
}

export interface SessionDeps<C extends PluginConnection> {
  /** Makes a connection with the current settings; `onClosed` is called if its server exits on its own. */
  connect(onClosed: () => void, progress: ProgressTracker): Promise<C>;
  /** The command line last started, for messages. */
  commandLine(): string;
  /** The `file:` URI of a vault-relative path. */
  uriOf(path: string): string;
  clock: Clock;
  /** Redraws the status bar item. */
  render(view: StatusView): void;
  /** Tells the user something (a Notice). */
  notice(message: string): void;
  /** Called after the server (re)started, and after a sync may have changed the index. */
  onIndexChanged?(): void;
  /** The store is encrypted and needs its passphrase (`error`: its kind and the server's words); once per try. */
  offerPassphrase?(error: LockedError): void;
  restartPolicy?: RestartPolicy;
}

/** How often the status bar asks for fresh status while the server runs, in milliseconds. */
export const STATUS_POLL_MS = 60_000;
/** Wait after a vault event before asking for status (the server syncs first), in milliseconds. */
export const AFTER_SYNC_MS = 1500;

export class Session<C extends PluginConnection = PluginConnection> {
  readonly vault: VaultSync;
  private readonly progress: ProgressTracker;
  private readonly supervisor: Supervisor<C>;
  private readonly afterSync: Debouncer;
  private readonly poll: Debouncer;
  private status: StatusResult | undefined;
  /** When a sync was last seen to end (ISO 8601): "last sync" moves on a sync that changed nothing too. */
  private checkedAt: string | undefined;
  private disposed = false;
  private readonly locked: PassphraseOffer;
  private readonly covered = new CoveredMessages();

  constructor(private readonly deps: SessionDeps<C>) {
    this.locked = new PassphraseOffer((error) => deps.offerPassphrase?.(error));
    this.progress = new ProgressTracker(
      () => this.render(),
      () => {
        this.checkedAt = new Date().toISOString();
        this.refreshStatus();
      },
    );
    this.supervisor = new Supervisor(
      (onClosed) => deps.connect(onClosed, this.progress),
      deps.restartPolicy ?? new RestartPolicy(),
      deps.clock,
      (state) => this.stateChanged(state),
    );
    this.afterSync = new Debouncer(deps.clock, AFTER_SYNC_MS);
    this.poll = new Debouncer(deps.clock, STATUS_POLL_MS);
    this.vault = new VaultSync({
      notify: (method, params) => {
        this.supervisor.running?.notify(method, params);
        this.afterSync.run(() => {
          this.refreshStatus();
          deps.onIndexChanged?.();
        });
      },
      uriOf: deps.uriOf,
      clock: deps.clock,
    });
    this.render();
  }

  get state(): ServerState {
    return this.supervisor.state;
  }

  /** The running server's requests, or undefined. */
  get api(): BotbinApi | undefined {
    return this.supervisor.running?.api;
  }

  /** The running server's requests, else undefined after telling the user why there is none. */
  requireApi(): BotbinApi | undefined {
    const api = this.api;
    if (!api) this.deps.notice(notRunningMessage(this.supervisor.state));
    return api;
  }

  start(): void {
    this.supervisor.start();
  }

  restart(): Promise<void> {
    return this.supervisor.restart();
  }

  /** New settings: a new command line restarts the server; new botbin.toml keys are sent to it. */
  async settingsChanged(change: {
    command: boolean;
    server: { settings: { botbin: ServerOptions } } | undefined;
  }): Promise<void> {
    if (change.command) return this.supervisor.restart();
    if (change.server) this.supervisor.running?.sendSettings(change.server);
  }

  /** A `botbin/error` of the server: a store that needs its passphrase offers it (once per try). */
  serverError(report: ErrorReport): void {
    if (this.locked.check(lockedError(report))) this.covered.cover(report);
  }

  /** A `window/showMessage` of the server: true when a `botbin/error` already covered it (then not shown). */
  serverMessage(message: string): boolean {
    return this.covered.take(message);
  }

  /** The user gave a passphrase: `change` (settings and passphrase) goes to the server; a new try begins. */
  async unlocked(change: { settings: { botbin: ServerOptions } }): Promise<void> {
    this.locked.reset();
    const running = this.supervisor.running;
    if (running) running.sendSettings(change);
    else if (this.supervisor.state.kind === "failed") await this.supervisor.restart();
  }

  /** Asks the server for status, then redraws the status bar. */
  refreshStatus(): void {
    const api = this.api;
    if (!api) return;
    const attempt = this.locked.attempt;
    api.status().then(
      (status) => {
        if (this.disposed) return;
        this.status = status;
        this.render();
        this.locked.check(lockedReason(status), attempt);
      },
      () => undefined,
    );
  }

  /** Stops the server (the plugin unloads); the vault events gathered so far are sent first. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.vault.flush();
    this.vault.dispose();
    this.afterSync.cancel();
    this.poll.cancel();
    await this.supervisor.stop();
  }

  private stateChanged(state: ServerState): void {
    if (this.disposed && state.kind !== "stopped") return;
    if (state.kind === "running") {
      this.refreshStatus();
      this.schedulePoll();
      this.deps.onIndexChanged?.();
    } else {
      this.status = undefined;
      this.poll.cancel();
      this.progress.clear();
    }
    if (state.kind === "failed") this.deps.notice(failureMessage(state.reason, this.deps.commandLine(), state.error));
    this.render();
  }

  private schedulePoll(): void {
    this.poll.run(() => {
      this.refreshStatus();
      if (this.supervisor.state.kind === "running") this.schedulePoll();
    });
  }

  private render(): void {
    this.deps.render(
      statusView({
        server: this.supervisor.state,
        progress: this.progress.current,
        status: this.status,
        checkedAt: this.checkedAt,
      }),
    );
  }
}
