/**
 * The running state every front end shares: the supervised server (restarted with backoff when it dies),
 * indexing progress, the last `botbin/status` (asked at start, after each sync, shortly after a change, and every
 * minute), the status bar view, and the passphrase offer of an encrypted store (once per try). A front end hands in
 * how to connect, how to render and how to tell the user; VS Code and Obsidian add their own events and settings.
 */
import type { ErrorReport, StatusResult } from "@botbin/protocol";
import type { BotbinApi } from "./api";
import { type Clock, Debouncer } from "./clock";
import { notRunningMessage } from "./messages";
import { CoveredMessages, lockedError, type LockedError, lockedReason, PassphraseOffer } from "./passphrase";
import { ProgressTracker } from "./progress";
import { RestartPolicy } from "./restartPolicy";
import type { StatusView } from "./status";
import { type StatusLook, statusView } from "./statusView";
import { type ServerConnection, type ServerState, Supervisor } from "./supervisor";

/** A started server as the session needs it. */
export interface SessionConnection extends ServerConnection {
  readonly api: BotbinApi;
}

export interface ClientSessionDeps<C extends SessionConnection> {
  /** Makes a connection with the current settings; `onClosed` is called if its server exits on its own. */
  connect(onClosed: () => void, progress: ProgressTracker): Promise<C>;
  clock: Clock;
  /** How the status bar looks in this front end. */
  look: StatusLook;
  /** Redraws the status bar item. */
  render(view: StatusView): void;
  /** The server failed for good (a start that failed, a crash loop): tell the user, naming the reason. */
  onFailed(state: Extract<ServerState, { kind: "failed" }>): void;
  /** A command needs the server and it is not running (default: nothing). */
  onNotRunning?(message: string, state: ServerState): void;
  /** The store is encrypted and needs its passphrase (`error`: its kind and the server's words); once per try. */
  offerPassphrase?(error: LockedError): void;
  /** Each new server state, after the session reacted (for a log). */
  onState?(state: ServerState): void;
  /** Called after the server (re)started, and after a change may have changed the index. */
  onIndexChanged?(): void;
  /** A status request failed (for a log). */
  onStatusError?(error: unknown): void;
  restartPolicy?: RestartPolicy;
}

/** How often the status bar asks for fresh status while the server runs, in milliseconds. */
export const STATUS_POLL_MS = 60_000;
/** Wait after a change (a saved note, a vault event) before asking for status: the server syncs first (ms). */
export const AFTER_CHANGE_MS = 1500;

export class ClientSession<C extends SessionConnection> {
  readonly progress: ProgressTracker;
  private readonly supervisor: Supervisor<C>;
  private readonly afterChange: Debouncer;
  private readonly poll: Debouncer;
  private status: StatusResult | undefined;
  /** When a sync was last seen to end (ISO 8601): "last sync" moves on a sync that changed nothing too. */
  private checkedAt: string | undefined;
  private disposed = false;
  private readonly locked: PassphraseOffer;
  private readonly covered = new CoveredMessages();

  constructor(private readonly deps: ClientSessionDeps<C>) {
    this.locked = new PassphraseOffer((error) => deps.offerPassphrase?.(error));
    this.progress = new ProgressTracker(
      () => this.render(),
      () => this.synced(),
    );
    this.supervisor = new Supervisor(
      (onClosed) => deps.connect(onClosed, this.progress),
      deps.restartPolicy ?? new RestartPolicy(),
      deps.clock,
      (state) => this.stateChanged(state),
    );
    this.afterChange = new Debouncer(deps.clock, AFTER_CHANGE_MS);
    this.poll = new Debouncer(deps.clock, STATUS_POLL_MS);
    this.render();
  }

  get state(): ServerState {
    return this.supervisor.state;
  }

  /** The running connection, or undefined. */
  get running(): C | undefined {
    return this.supervisor.running;
  }

  /** The running server's requests, or undefined. */
  get api(): BotbinApi | undefined {
    return this.supervisor.running?.api;
  }

  /** The running server's requests, else undefined after telling the user why there is none. */
  requireApi(): BotbinApi | undefined {
    const api = this.api;
    if (!api) this.deps.onNotRunning?.(notRunningMessage(this.state), this.state);
    return api;
  }

  start(): void {
    this.supervisor.start();
  }

  restart(): Promise<void> {
    return this.supervisor.restart();
  }

  /** A sync ended (an indexing report, or Sync Now / Reindex answered): note when, and ask for status. */
  synced(): void {
    this.checkedAt = new Date().toISOString();
    this.refreshStatus();
  }

  /** Something changed that the server syncs by itself (a saved note, a vault event): ask for status soon. */
  changed(): void {
    this.afterChange.run(() => {
      this.refreshStatus();
      this.deps.onIndexChanged?.();
    });
  }

  /** A `botbin/error` of the server: a store that needs its passphrase offers it (once per try). */
  serverError(report: ErrorReport): void {
    if (this.locked.check(lockedError(report))) this.covered.cover(report);
  }

  /** A `window/showMessage` of the server: true when a `botbin/error` already covered it (then not shown). */
  serverMessage(message: string): boolean {
    return this.covered.take(message);
  }

  /** A passphrase was given or forgotten: a new try begins (the next error offers the passphrase again). */
  passphraseChanged(): void {
    this.locked.reset();
  }

  /** The user gave a passphrase: a new try begins; `send` tells the running server, else a server that failed
   * starts again (its start reads the passphrase). */
  async unlocked(send: (connection: C) => void | Promise<void>): Promise<void> {
    this.passphraseChanged();
    const running = this.supervisor.running;
    if (running) await send(running);
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
      (error: unknown) => this.deps.onStatusError?.(error),
    );
  }

  /** Stops the server (the front end closes); safe more than once. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.afterChange.cancel();
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
    if (state.kind === "failed") this.deps.onFailed(state);
    this.deps.onState?.(state);
    this.render();
  }

  private schedulePoll(): void {
    this.poll.run(() => {
      this.refreshStatus();
      if (this.supervisor.state.kind === "running") this.schedulePoll();
    });
  }

  private render(): void {
    const inputs = {
      server: this.supervisor.state,
      progress: this.progress.current,
      status: this.status,
      checkedAt: this.checkedAt,
    };
    this.deps.render(statusView(inputs, this.deps.look));
  }
}
