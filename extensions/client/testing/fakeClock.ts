// A Clock whose time moves only when a test says so.
import type { Cancel, Clock } from "../src/clock";

interface Timer {
  at: number;
  callback: () => void;
  cancelled: boolean;
}

export class FakeClock implements Clock {
  time = 0;
  private timers: Timer[] = [];

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, delayMs: number): Cancel {
    const timer = { at: this.time + delayMs, callback, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Moves time forward, running each due timer at its own time, in order. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.cancelled = true;
      this.time = due.at;
      due.callback();
    }
    this.time = end;
    this.timers = this.timers.filter((t) => !t.cancelled);
  }

  /** Timers scheduled and not yet run or cancelled. */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}

/** Lets promise callbacks that are already due run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}
