/**
 * Shapes of botbin's custom requests and commands as JSON on the wire (camelCase; docs/protocol.md).
 * Lines are 0-based; a range's end is exclusive; characters are UTF-16 code units unless the client
 * negotiated another position encoding.
 */

/** An LSP position: 0-based line and character. */
export interface Position {
  line: number;
  character: number;
}

/** An LSP range; `end` is exclusive. */
export interface Range {
  start: Position;
  end: Position;
}

/** How a chunk binds an agent: a rule that must hold, a recommendation, or background. */
export type ChunkKind = "hard" | "soft" | "lore";

/** Optional filters of `botbin/search`; every one narrows the hits. */
export interface SearchFilters {
  /** Glob over the note's workspace-relative path (`memory/**`). */
  pathGlob?: string;
  /** A frontmatter tag the note must carry. */
  tag?: string;
  kind?: ChunkKind;
  /** Earliest note date, ISO `YYYY-MM-DD`, inclusive. */
  dateFrom?: string;
  /** Latest note date, ISO `YYYY-MM-DD`, inclusive. */
  dateTo?: string;
}

export interface SearchParams {
  query: string;
  /** Hits wanted, 1-1000 (default: the `top_k` setting). */
  k?: number;
  filters?: SearchFilters;
  /** Keep only the best chunk of each note. */
  bestPerNote?: boolean;
}

/** One chunk that matched, as `botbin/search` and `botbin/related` send it. */
export interface Hit {
  /** The note's path relative to its workspace folder, with `/`. */
  path: string;
  /** The note's `file:` URI. */
  uri: string;
  /** First line of the chunk, 0-based. */
  startLine: number;
  /** Line after the chunk, 0-based (exclusive). */
  endLine: number;
  /** The chunk's whole lines as an LSP range. */
  range: Range;
  /** Headings above the chunk, outermost first (may be empty). */
  headingPath: string[];
  kind: ChunkKind;
  /** The note's title (frontmatter `title`, else the file name without `.md`). */
  title: string;
  snippet: string;
  /** Hybrid score `alpha·cosine + (1−alpha)·bm25`, higher is better. */
  score: number;
  cosine: number;
  /** BM25 score normalized to 0-1 over the candidates. */
  bm25: number;
}

export interface SearchResult {
  hits: Hit[];
  /** When the searched index was last written (ISO 8601 UTC), null before the first sync. */
  indexedAt: string | null;
  /** True while a sync runs: the hits cover what is indexed so far. */
  indexing: boolean;
  /** True when the model is unavailable and hits are ranked by keywords (BM25) alone. */
  degraded: boolean;
}

/** The paragraph at `position` of an open or saved note, or any `text`. */
export type RelatedParams =
  { uri: string; position: Position; k?: number } | { text: string; uri?: string; k?: number };

export interface RelatedResult {
  hits: Hit[];
  indexing: boolean;
  degraded: boolean;
}

/** A tracked note whose file changed since its last sync. */
export interface StaleNote {
  path: string;
  reason: string;
}

/** One side of a conflict between two rules. */
export interface RuleRef {
  path: string;
  /** 0-based line of the rule's cue. */
  line: number;
  kind: ChunkKind;
  modality: string;
  cue: string;
  text: string;
}

/** Two rules on the same action with opposite polarity. */
export interface Conflict {
  action: string;
  message: string;
  first: RuleRef;
  second: RuleRef;
}

/** `botbin/status` of one workspace folder. */
export interface FolderStatus {
  uri: string;
  /** The folder's filesystem path. */
  workspace: string;
  model: string;
  files: number;
  chunks: number;
  lastSync: string | null;
  tracked: number;
  stale: StaleNote[];
  warnings: string[];
  conflicts: Conflict[];
  /** Why the folder's last sync failed, null after a good one. */
  lastError: string | null;
  /** Why the embedding model is unavailable, null when it works. */
  modelError: string | null;
  /**
   * Whether the folder's store is encrypted at rest: "converting" while an encrypt or decrypt is left for the
   * next sync to finish. Absent when the folder could not report at all (its `warnings` say why).
   */
  encryption?: EncryptionState;
}

/** `encryption` of a folder's status (`botbin status` shows the same). */
export type EncryptionState = "on" | "off" | "converting";

export interface StatusResult {
  files: number;
  chunks: number;
  /** Notes changed on disk but not yet synced, plus queued syncs. */
  pending: number;
  lastSync: string | null;
  model: string | null;
  degraded: boolean;
  indexing: boolean;
  folders: FolderStatus[];
}

/** What one folder's sync did, as the `botbin.sync` and `botbin.reindex` commands answer. */
export interface FolderSyncSummary {
  uri: string;
  error: string | null;
  added: string[];
  modified: string[];
  deleted: string[];
  unchanged: number;
  failed: { path: string; reason: string }[];
}

export interface SyncResult {
  /** False when the sync was still running after the server's wait (it goes on). */
  done: boolean;
  folders: FolderSyncSummary[];
}

/**
 * Server settings with the keys of botbin.toml, sent as `initializationOptions` and, wrapped as
 * `{botbin: ...}`, in `workspace/didChangeConfiguration`. An absent key keeps botbin.toml's value.
 */
export interface ServerSettings {
  /** Globs of tracked notes (`**` spans folders). */
  include?: string[];
  /** Globs never tracked. */
  exclude?: string[];
  /** Vault mode: track every `**\/*.md` note. */
  vault?: boolean;
  /** Hybrid weight of the cosine, 0-1. */
  alpha?: number;
  /** Hits per search, 1-1000. */
  top_k?: number;
}

/**
 * What `initializationOptions` and `didChangeConfiguration` carry: the settings, plus the passphrase of an
 * encrypted store. The server keeps the passphrase in memory only; a front end never saves or logs it.
 */
export interface ServerOptions extends ServerSettings {
  passphrase?: string;
}

/** `botbin/remember`: append `text` (with `#tags`) to today's daily note `memory/YYYY-MM-DD.md`. */
export interface RememberParams {
  text: string;
  /** Tags without `#`; each is appended as `#tag`. */
  tags?: string[];
  /** A note of the workspace folder to remember in (default: the first folder). */
  uri?: string;
}

export interface RememberResult {
  /** The daily note's path relative to its workspace folder. */
  path: string;
  uri: string;
  /** The line appended (`- HH:MM text #tag`). */
  text: string;
  /** Where the appended line is in the note. */
  range: Range;
}
