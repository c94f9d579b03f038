/** A server's last words: what it wrote to stderr lately, for the message of a start that failed. */

/** A line that reads like the reason a process failed (a Python traceback's last line, "No module named ..."). */
const ERROR_LIKE = /error|exception|no module|not found|denied|cannot|can't/i;
/** How many of the latest lines are kept. */
const KEEP_LINES = 20;

/** The last non-empty lines of a text that arrives in pieces (a child's stderr). */
export class RecentLines {
  private lines: string[] = [];
  private partial = "";

  add(text: string): void {
    const lines = (this.partial + text).split(/\r?\n/);
    this.partial = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) this.lines.push(line.trim());
    this.lines.splice(0, Math.max(0, this.lines.length - KEEP_LINES));
  }

  /** The last error-like line (the one a failed start names), if any. */
  lastError(): string | undefined {
    const all = this.partial.trim() ? [...this.lines, this.partial.trim()] : this.lines;
    return [...all].reverse().find((line) => ERROR_LIKE.test(line));
  }

  clear(): void {
    this.lines = [];
    this.partial = "";
  }
}

/** The promise's value, or undefined when it takes longer than `ms` milliseconds. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
