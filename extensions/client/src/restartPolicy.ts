/** When to start the server again after it exits: exponential backoff, and a stop on a crash loop. */

export interface RestartPolicyOptions {
  /** Wait before the first restart, in milliseconds. */
  initialDelayMs: number;
  /** Longest wait between restarts, in milliseconds. */
  maxDelayMs: number;
  /** Each crash in a row multiplies the wait by this. */
  factor: number;
  /** A server that ran this long (milliseconds) before it exited starts a new series of crashes. */
  stableAfterMs: number;
  /** Crashes in a row after which the policy gives up. */
  maxCrashes: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  factor: 2,
  stableAfterMs: 60_000,
  maxCrashes: 6,
};

/** How the server ended. */
export interface ServerExit {
  /** True when it had answered `initialize`; false when it never got that far. */
  started: boolean;
  /** How long it ran, in milliseconds (0 when it never started). */
  uptimeMs: number;
}

export type RestartDecision =
  { action: "restart"; delayMs: number; attempt: number } | { action: "giveUp"; reason: "startFailed" | "crashLoop" };

export class RestartPolicy {
  private crashes = 0;
  private readonly options: RestartPolicyOptions;

  constructor(options: Partial<RestartPolicyOptions> = {}) {
    this.options = { ...DEFAULT_RESTART_POLICY, ...options };
  }

  /**
   * What to do after an exit. A server that never started is a set-up problem (wrong path, botbin not
   * installed) that waiting will not fix, so the policy gives up at once and the user is told.
   */
  onExit(exit: ServerExit): RestartDecision {
    if (!exit.started) return { action: "giveUp", reason: "startFailed" };
    if (exit.uptimeMs >= this.options.stableAfterMs) this.crashes = 0;
    this.crashes += 1;
    if (this.crashes > this.options.maxCrashes) return { action: "giveUp", reason: "crashLoop" };
    const { initialDelayMs, factor, maxDelayMs } = this.options;
    const delayMs = Math.min(maxDelayMs, initialDelayMs * factor ** (this.crashes - 1));
    return { action: "restart", delayMs, attempt: this.crashes };
  }

  /** Forget past crashes (the user restarted the server or changed its settings). */
  reset(): void {
    this.crashes = 0;
  }
}
