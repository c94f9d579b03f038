/** Time that tests can replace: the current time and one-shot timers (milliseconds). */

/** Cancels a scheduled callback; calling it twice, or after the callback ran, does nothing. */
export type Cancel = () => void;

export interface Clock {
  /** Milliseconds since an arbitrary origin, never decreasing. */
  now(): number;
  /** Runs `callback` once after `delayMs` milliseconds. */
  setTimeout(callback: () => void, delayMs: number): Cancel;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, delayMs) => {
    const handle = setTimeout(callback, delayMs);
    return () => clearTimeout(handle);
  },
};

/** Runs only the last of a burst of calls, `delayMs` after the burst goes quiet. */
export class Debouncer {
  private cancelPending: Cancel | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly delayMs: number,
  ) {}

  run(callback: () => void): void {
    this.cancel();
    this.cancelPending = this.clock.setTimeout(() => {
      this.cancelPending = undefined;
      callback();
    }, this.delayMs);
  }

  cancel(): void {
    this.cancelPending?.();
    this.cancelPending = undefined;
  }
}
