/**
 * The plugin's running state, without Obsidian: @botbin/client's session (the supervised server, indexing progress,
 * status, the passphrase offer) plus the vault events forwarded to the server. The Obsidian side hands in how to
 * connect and how to show things; tests hand in fakes.
 */
import {
  AFTER_CHANGE_MS,
  type BotbinApi,
  ClientSession,
  type Clock,
  type LockedError,
  type ProgressTracker,
  type RestartPolicy,
  type ServerState,
  type SessionConnection,
} from "@botbin/client";
import type { ErrorReport, ServerOptions } from "@botbin/protocol";
import { failureMessage, OBSIDIAN_LOOK, type StatusView } from "./statusModel";
import { VaultSync } from "./vaultSync";

/** A started server as the session needs it (node/connection.ts is the real one). */
export interface PluginConnection extends SessionConnection {
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

/** Wait after a vault event before asking for status (the server syncs first), in milliseconds. */
export const AFTER_SYNC_MS = AFTER_CHANGE_MS;

export class Session<C extends PluginConnection = PluginConnection> {
  readonly vault: VaultSync;
  private readonly core: ClientSession<C>;

  constructor(deps: SessionDeps<C>) {
    this.core = new ClientSession<C>({
      connect: deps.connect,
      clock: deps.clock,
      look: OBSIDIAN_LOOK,
      render: deps.render,
      onFailed: (state) => deps.notice(failureMessage(state.reason, deps.commandLine(), state.error)),
      onNotRunning: (message) => deps.notice(message),
      ...(deps.offerPassphrase && { offerPassphrase: deps.offerPassphrase }),
      ...(deps.onIndexChanged && { onIndexChanged: deps.onIndexChanged }),
      ...(deps.restartPolicy && { restartPolicy: deps.restartPolicy }),
    });
    this.vault = new VaultSync({
      notify: (method, params) => {
        this.core.running?.notify(method, params);
        this.core.changed();
      },
      uriOf: deps.uriOf,
      clock: deps.clock,
    });
  }

  get state(): ServerState {
    return this.core.state;
  }

  /** The running server's requests, or undefined. */
  get api(): BotbinApi | undefined {
    return this.core.api;
  }

  /** The running server's requests, else undefined after telling the user why there is none. */
  requireApi(): BotbinApi | undefined {
    return this.core.requireApi();
  }

  start(): void {
    this.core.start();
  }

  restart(): Promise<void> {
    return this.core.restart();
  }

  /** New settings: a new command line restarts the server; new botbin.toml keys are sent to it. */
  async settingsChanged(change: {
    command: boolean;
    server: { settings: { botbin: ServerOptions } } | undefined;
  }): Promise<void> {
    if (change.command) return this.core.restart();
    if (change.server) this.core.running?.sendSettings(change.server);
  }

  /** A `botbin/error` of the server: a store that needs its passphrase offers it (once per try). */
  serverError(report: ErrorReport): void {
    this.core.serverError(report);
  }

  /** A `window/showMessage` of the server: true when a `botbin/error` already covered it (then not shown). */
  serverMessage(message: string): boolean {
    return this.core.serverMessage(message);
  }

  /** The user gave a passphrase: `change` (settings and passphrase) goes to the server; a new try begins. */
  unlocked(change: { settings: { botbin: ServerOptions } }): Promise<void> {
    return this.core.unlocked((running) => running.sendSettings(change));
  }

  /** Asks the server for status, then redraws the status bar. */
  refreshStatus(): void {
    this.core.refreshStatus();
  }

  /** Stops the server (the plugin unloads); the vault events gathered so far are sent first (a second call finds
   * none). */
  async dispose(): Promise<void> {
    this.vault.flush();
    this.vault.dispose();
    await this.core.dispose();
  }
}
