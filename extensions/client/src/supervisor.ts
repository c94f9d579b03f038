/**
 * Keeps one language server running: starts it, notices when it exits, and starts it again as the
 * restart policy says. Never throws and never waits on the editor: every start runs in the background.
 */
import type { Clock, Cancel } from "./clock";
import type { RestartPolicy } from "./restartPolicy";

/** One server process and its connection, started once and stopped once. */
export interface ServerConnection {
  /** Resolves once the server answered `initialize`; rejects when it cannot start. */
  start(): Promise<void>;
  /** Stops the server and frees the connection; safe in any state. */
  stop(): Promise<void>;
}

/** Makes a connection; `onClosed` is called if its server exits on its own. May reject (bad settings). */
export type ConnectionFactory<C extends ServerConnection> = (onClosed: () => void) => Promise<C>;

export type ServerState =
  | { kind: "starting" }
  | { kind: "running" }
  | { kind: "restarting"; delayMs: number; attempt: number }
  | { kind: "failed"; reason: "startFailed" | "crashLoop"; error: string }
  | { kind: "stopped" };

export class Supervisor<C extends ServerConnection> {
  private generation = 0;
  private connection: C | undefined;
  private startedAtMs = 0;
  private cancelRestart: Cancel | undefined;
  private current: ServerState = { kind: "stopped" };

  constructor(
    private readonly factory: ConnectionFactory<C>,
    private readonly policy: RestartPolicy,
    private readonly clock: Clock,
    private readonly onState: (state: ServerState) => void,
  ) {}

  get state(): ServerState {
    return this.current;
  }

  /** The connection while its server is running, else undefined. */
  get running(): C | undefined {
    return this.current.kind === "running" ? this.connection : undefined;
  }

  /** Starts the server in the background unless it is already starting or running. */
  start(): void {
    if (this.current.kind === "starting" || this.current.kind === "running") return;
    this.cancelRestart?.();
    void this.launch();
  }

  /** Stops whatever runs, forgets past crashes and starts afresh (user request or new settings). */
  async restart(): Promise<void> {
    await this.halt();
    this.policy.reset();
    void this.launch();
  }

  /** Stops the server for good (deactivation). */
  async stop(): Promise<void> {
    await this.halt();
    this.setState({ kind: "stopped" });
  }

  private async halt(): Promise<void> {
    this.generation += 1;
    this.cancelRestart?.();
    this.cancelRestart = undefined;
    const old = this.connection;
    this.connection = undefined;
    await old?.stop().catch(() => undefined);
  }

  private async launch(): Promise<void> {
    const generation = ++this.generation;
    this.setState({ kind: "starting" });
    let connection: C | undefined;
    try {
      connection = await this.factory(() => this.closed(generation));
      if (generation !== this.generation) return void (await connection.stop().catch(() => undefined));
      this.connection = connection;
      await connection.start();
    } catch (error) {
      if (generation !== this.generation) return;
      this.connection = undefined;
      await connection?.stop().catch(() => undefined);
      this.decide({ started: false, uptimeMs: 0 }, errorText(error));
      return;
    }
    if (generation !== this.generation) return;
    this.startedAtMs = this.clock.now();
    this.setState({ kind: "running" });
  }

  /** The server exited on its own. While starting, `launch` sees the failed start and decides instead. */
  private closed(generation: number): void {
    if (generation !== this.generation || this.current.kind !== "running") return;
    const old = this.connection;
    this.connection = undefined;
    void old?.stop().catch(() => undefined);
    this.decide({ started: true, uptimeMs: this.clock.now() - this.startedAtMs }, "the server exited");
  }

  private decide(exit: { started: boolean; uptimeMs: number }, error: string): void {
    const decision = this.policy.onExit(exit);
    if (decision.action === "giveUp") {
      this.setState({ kind: "failed", reason: decision.reason, error });
      return;
    }
    const generation = this.generation;
    this.setState({ kind: "restarting", delayMs: decision.delayMs, attempt: decision.attempt });
    this.cancelRestart = this.clock.setTimeout(() => {
      this.cancelRestart = undefined;
      if (generation === this.generation) void this.launch();
    }, decision.delayMs);
  }

  private setState(state: ServerState): void {
    this.current = state;
    this.onState(state);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
