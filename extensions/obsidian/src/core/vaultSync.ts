/**
 * Note-to-memory sync: Obsidian's vault events as LSP notifications. An edited note is `didSave`d (the
 * server syncs it at once); created, deleted and renamed notes go out as one batched
 * `workspace/didChangeWatchedFiles`, so a folder moved or a plugin writing many notes costs one sync.
 * Only markdown notes are sent, never anything under `.obsidian/` or `.trash/`.
 */
import { type Clock, Debouncer } from "@botbin/client";

/** `FileChangeType` of LSP. */
export const FileChange = { created: 1, changed: 2, deleted: 3 } as const;
export type FileChangeType = (typeof FileChange)[keyof typeof FileChange];

export interface FileEvent {
  uri: string;
  type: FileChangeType;
}

export interface VaultSyncDeps {
  /** Sends a notification to the server (dropped when none is running). */
  notify(method: string, params: unknown): void;
  /** The `file:` URI of a vault-relative path. */
  uriOf(path: string): string;
  clock: Clock;
  /** How long created/deleted/renamed notes are gathered into one notification, in milliseconds. */
  batchMs?: number;
}

export const DID_SAVE = "textDocument/didSave";
export const DID_CHANGE_WATCHED_FILES = "workspace/didChangeWatchedFiles";
const DEFAULT_BATCH_MS = 100;

/** True for a vault-relative path the server should hear about. */
export function isNote(path: string): boolean {
  if (!path.toLowerCase().endsWith(".md")) return false;
  const top = path.replace(/^\/+/, "").split("/")[0];
  return top !== ".obsidian" && top !== ".trash";
}

export class VaultSync {
  private readonly batch = new Map<string, FileChangeType>();
  private readonly debouncer: Debouncer;

  constructor(private readonly deps: VaultSyncDeps) {
    this.debouncer = new Debouncer(deps.clock, deps.batchMs ?? DEFAULT_BATCH_MS);
  }

  created(path: string): void {
    this.queue(path, FileChange.created);
  }

  /** A note's content changed (Obsidian saved it): the server syncs it now. */
  modified(path: string): void {
    if (!isNote(path)) return;
    this.deps.notify(DID_SAVE, { textDocument: { uri: this.deps.uriOf(path) } });
  }

  deleted(path: string): void {
    this.queue(path, FileChange.deleted);
  }

  renamed(path: string, oldPath: string): void {
    this.queue(oldPath, FileChange.deleted);
    this.queue(path, FileChange.created);
  }

  /** Sends what is gathered now (before the server stops, and in tests). */
  flush(): void {
    this.debouncer.cancel();
    if (this.batch.size === 0) return;
    const changes: FileEvent[] = [...this.batch].map(([uri, type]) => ({ uri, type }));
    this.batch.clear();
    this.deps.notify(DID_CHANGE_WATCHED_FILES, { changes });
  }

  /** Forgets what is gathered (the server restarts and scans the vault anyway). */
  dispose(): void {
    this.debouncer.cancel();
    this.batch.clear();
  }

  private queue(path: string, type: FileChangeType): void {
    if (!isNote(path)) return;
    const uri = this.deps.uriOf(path);
    const before = this.batch.get(uri);
    // deleted then created again in one batch (a rename back, an editor's safe-save) is a change
    const merged = before === FileChange.deleted && type === FileChange.created ? FileChange.changed : type;
    this.batch.set(uri, merged);
    this.debouncer.run(() => this.flush());
  }
}
