// The part of OpenClaw's plugin SDK (openclaw 2026.9.6, dist/plugin-sdk/plugin-entry.d.ts, "src/context-engine/
// types.d.ts") this engine uses, written out structurally: the plugin has no runtime dependency on the host's
// package, and `npm install` of this repository does not pull OpenClaw's 770 MB in.

/** A content block of a message (text is all this engine reads). */
export interface ContentBlock {
  type: string;
  text?: string;
}

/** A transcript message as the host hands it over (user, assistant, toolResult, compactionSummary, custom...). */
export interface AgentMessage {
  role: string;
  content?: string | ContentBlock[];
  /** compactionSummary / branchSummary messages carry their text here. */
  summary?: string;
  /** Milliseconds (a string in older persisted rows). */
  timestamp?: number | string;
  /** The host's key of an admitted user message ("<turn id>:user"). */
  idempotencyKey?: string;
  excludeFromContext?: boolean;
  [key: string]: unknown;
}

export interface AssembleParams {
  sessionId: string;
  sessionKey?: string;
  messages: AgentMessage[];
  /** The whole prompt's budget (tokens, the host counts ceil(chars / 4) per message). */
  tokenBudget?: number;
  model?: string;
  /** The incoming user prompt of this turn. */
  prompt?: string;
}

export interface AssembleResult {
  messages: AgentMessage[];
  estimatedTokens: number;
  systemPromptAddition?: string;
}

export interface CommitTurnParams {
  advancementKey: string;
  messages: AgentMessage[];
  sessionId: string;
  sessionKey?: string;
  isHeartbeat?: boolean;
}

export interface CompactParams {
  sessionId: string;
  sessionKey: string;
  tokenBudget?: number;
  force?: boolean;
  currentTokenCount?: number;
  runtimeContext?: Record<string, unknown>;
  abortSignal?: AbortSignal;
  [key: string]: unknown;
}

export interface CompactResult {
  ok: boolean;
  compacted: boolean;
  reason?: string;
  result?: {
    summary?: string;
    tokensBefore: number;
    tokensAfter?: number;
    details?: unknown;
  };
}

export interface BootstrapParams {
  sessionId: string;
  sessionKey?: string;
  sessionFile: string;
}

export interface AfterTurnParams {
  sessionId: string;
  sessionKey?: string;
  messages: AgentMessage[];
  prePromptMessageCount: number;
  isHeartbeat?: boolean;
  tokenBudget?: number;
}

export interface ContextEngineInfo {
  id: string;
  name: string;
  version?: string;
  ownsCompaction?: boolean;
  acceptedHostParams?: string[];
  transcriptSemantics?: {
    currentTurnFence?: "before-current-turn-entry-v1";
    turnAdvancementIdempotency?: "atomic-idempotent-v1";
  };
}

export interface ContextEngine {
  readonly info: ContextEngineInfo;
  bootstrap?(params: BootstrapParams): Promise<{ bootstrapped: boolean; reason?: string }>;
  ingest(params: { sessionId: string; message: AgentMessage; isHeartbeat?: boolean }): Promise<{ ingested: boolean }>;
  commitTurn?(params: CommitTurnParams): Promise<{ status: "committed" | "duplicate" }>;
  assemble(params: AssembleParams): Promise<AssembleResult>;
  afterTurn?(params: AfterTurnParams): Promise<void>;
  compact(params: CompactParams): Promise<CompactResult>;
  dispose?(): Promise<void>;
}

export interface ContextEngineFactoryContext {
  config?: unknown;
  agentDir?: string;
  workspaceDir?: string;
}

export interface PluginLogger {
  debug?: (message: string) => void;
  info: (message: string) => void;
  warn: (message: string) => void;
  error: (message: string) => void;
}

export interface PluginApi {
  id: string;
  pluginConfig?: Record<string, unknown>;
  logger: PluginLogger;
  registerContextEngine: (
    id: string,
    factory: (ctx: ContextEngineFactoryContext) => ContextEngine | Promise<ContextEngine>,
  ) => void;
}

/** The host's own compaction, reached through `openclaw/plugin-sdk/core` at run time (absent in unit tests). */
export type RuntimeCompaction = (params: CompactParams) => Promise<CompactResult>;
