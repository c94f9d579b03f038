/**
 * botbin's indexing progress from the server's `$/progress` work-done reports: one token per folder being
 * synced, merged into one figure for the status bar. Reports under other titles are ignored.
 */
import { PROGRESS_TITLE } from "@botbin/protocol";

/** A `$/progress` value (LSP WorkDoneProgressBegin | Report | End). */
export type WorkDoneValue =
  | { kind: "begin"; title: string; message?: string; percentage?: number }
  | { kind: "report"; message?: string; percentage?: number }
  | { kind: "end"; message?: string };

export interface IndexingProgress {
  /** True while at least one folder is being indexed. */
  active: boolean;
  /** Message of the latest report ("memory: 120/900 chunks"), if any. */
  message?: string;
  /** Mean completion over the running folders, 0-100, if reported. */
  percentage?: number;
}

type Token = string | number;

interface Part {
  label: string;
  message?: string;
  percentage?: number;
}

export class ProgressTracker {
  private readonly parts = new Map<Token, Part>();
  private latest: Token | undefined;

  /**
   * @param onChange called after every change, with the merged progress.
   * @param onEnd called when a folder's indexing ends (time to ask for fresh status).
   */
  constructor(
    private readonly onChange: (progress: IndexingProgress) => void,
    private readonly onEnd: () => void = () => undefined,
  ) {}

  update(token: Token, value: WorkDoneValue): void {
    if (value.kind === "begin") {
      if (value.title !== PROGRESS_TITLE) return;
      const part: Part = { label: value.message ?? "" };
      if (value.percentage !== undefined) part.percentage = value.percentage;
      this.parts.set(token, part);
    } else {
      const part = this.parts.get(token);
      if (!part) return;
      if (value.kind === "end") {
        this.parts.delete(token);
        if (this.latest === token) this.latest = undefined;
        this.onChange(this.current);
        this.onEnd();
        return;
      }
      Object.assign(part, pick(value));
    }
    this.latest = token;
    this.onChange(this.current);
  }

  /** Forget every report (the connection closed). */
  clear(): void {
    if (this.parts.size === 0) return;
    this.parts.clear();
    this.latest = undefined;
    this.onChange(this.current);
  }

  get current(): IndexingProgress {
    if (this.parts.size === 0) return { active: false };
    const progress: IndexingProgress = { active: true };
    const part = this.latest !== undefined ? this.parts.get(this.latest) : undefined;
    if (part?.message) progress.message = part.label ? `${part.label}: ${part.message}` : part.message;
    else if (part?.label) progress.message = part.label;
    const shares = [...this.parts.values()].map((p) => p.percentage).filter((p) => p !== undefined);
    if (shares.length > 0) progress.percentage = Math.round(shares.reduce((a, b) => a + b, 0) / shares.length);
    return progress;
  }
}

function pick(value: { message?: string; percentage?: number }): Omit<Part, "label"> {
  const out: Omit<Part, "label"> = {};
  if (value.message !== undefined) out.message = value.message;
  if (value.percentage !== undefined) out.percentage = value.percentage;
  return out;
}
