// botbin as an OpenClaw context engine: every accepted turn goes to botbin's conversation capture (commitTurn),
// every model call gets botbin's tiers as systemPromptAddition within the host's budget (assemble), older messages
// fold into botbin's summary when its confidence is high enough (compact). botbin is a sidecar (`botbin serve`):
// when it is absent, slow or locked, the turn goes on with the plain messages, one log line says why, the turns
// wait in the spool, and the next turn tries again. No method ever throws: a throw would make OpenClaw quarantine
// the engine.
import type { AssembleParams as WireAssembleParams, CompactParams as WireCompactParams } from "@botbin/protocol";
import { applyCompaction, CompactionStore, coveredKeys, hostMessages, splitForCompaction } from "./compaction";
import type {
  AfterTurnParams,
  AgentMessage,
  AssembleParams,
  AssembleResult,
  CommitTurnParams,
  CompactParams,
  CompactResult,
  ContextEngine,
  ContextEngineInfo,
  PluginLogger,
  RuntimeCompaction,
} from "./host";
import { fitLines, hostTokens, messagesTokens, messageText, turnsOf, userWords } from "./messages";
import { isLocked, MemoryLink } from "./link";
import type { Settings } from "./settings";
import { Spool } from "./spool";

export const ENGINE_ID = "botbin";
/** A memory budget under this many tokens is not worth a round trip. */
const MIN_BUDGET_TOKENS = 16;
/** Messages of the conversation sent with `assemble` (its query context); the rest stays in the host. */
const ASSEMBLE_TAIL = 4;
/** When the messages take more than this share of the host's budget, assemble folds the older ones first. */
export const COMPACT_AT_SHARE = 0.8;

export interface EngineParts {
  settings: Settings;
  link: MemoryLink;
  spool: Spool;
  compactions: CompactionStore;
  logger: PluginLogger;
  /** OpenClaw's own compaction (openclaw/plugin-sdk/core), loaded when first needed; undefined when unavailable. */
  runtimeCompaction: () => Promise<RuntimeCompaction | undefined>;
  now?: () => number;
}

interface Item {
  tier?: unknown;
  text?: unknown;
}

/** The addition cut to `budget` host tokens, or "" when a cut would drop a rule (rules are never cut). */
export function fitAddition(text: string, items: readonly Item[], budget: number): string {
  const fitted = fitLines(text, budget);
  const rules = items
    .filter((i) => i.tier === "hard" && typeof i.text === "string")
    .map((i) => (i.text as string).trim());
  return rules.every((rule) => fitted.includes(rule)) ? fitted : "";
}

export class BotbinEngine implements ContextEngine {
  readonly info: ContextEngineInfo = {
    id: ENGINE_ID,
    name: "botbin memory",
    ownsCompaction: false,
    acceptedHostParams: ["sessionKey", "prompt"],
    transcriptSemantics: {
      currentTurnFence: "before-current-turn-entry-v1",
      turnAdvancementIdempotency: "atomic-idempotent-v1",
    },
  };
  /** The messages of each session's last assemble (what a compaction in this process folds). */
  private readonly lastMessages = new Map<string, AgentMessage[]>();

  constructor(private readonly parts: EngineParts) {}

  private now(): number {
    return (this.parts.now ?? Date.now)();
  }

  async ingest(): Promise<{ ingested: boolean }> {
    // commitTurn is the durable path (the host calls it once per accepted turn, and again after a crash)
    return { ingested: false };
  }

  async commitTurn(params: CommitTurnParams): Promise<{ status: "committed" | "duplicate" }> {
    try {
      if (params.isHeartbeat !== true) this.parts.spool.append(turnsOf(params.messages, params.sessionId));
      await this.parts.link.deliver(this.parts.spool, false);
    } catch (err) {
      this.parts.logger.warn(`botbin: capture of a turn failed (${String(err)}); the turn goes on`);
    }
    return { status: "committed" };
  }

  async afterTurn(_params: AfterTurnParams): Promise<void> {
    try {
      await this.parts.link.deliver(this.parts.spool, false);
    } catch (err) {
      this.parts.logger.warn(`botbin: delivery of captured turns failed (${String(err)})`);
    }
  }

  async assemble(params: AssembleParams): Promise<AssembleResult> {
    let messages = applyCompaction(params.messages, this.parts.compactions.get(params.sessionId));
    this.lastMessages.set(params.sessionId, messages);
    let used = messagesTokens(messages);
    if (params.tokenBudget !== undefined && used > COMPACT_AT_SHARE * params.tokenBudget) {
      const folded = await this.fold(params.sessionId, messages, params.tokenBudget).catch(() => undefined);
      if (folded !== undefined) {
        messages = folded.messages;
        used = messagesTokens(messages);
      }
    }
    const plain = { messages, estimatedTokens: used };
    try {
      const room = params.tokenBudget === undefined ? Infinity : params.tokenBudget - used;
      const budget = Math.floor(Math.min(this.parts.settings.budgetTokens, room));
      if (budget < MIN_BUDGET_TOKENS) return plain;
      await this.sessionStart(params.sessionId, budget);
      const tail = messages
        .filter((m) => m.role === "user" || m.role === "assistant")
        .slice(-ASSEMBLE_TAIL)
        .map((m) => ({ role: m.role, content: m.role === "user" ? userWords(messageText(m)) : messageText(m) }));
      // maxChars: the host counts ceil(chars / 4), botbin WordPiece tokens; both limits hold
      const request: WireAssembleParams = {
        budgetTokens: budget,
        maxChars: 4 * budget,
        session: params.sessionId,
        messages: tail,
        ...(params.prompt ? { prompt: userWords(params.prompt) } : {}),
      };
      const { link, settings } = this.parts;
      const value = await link.call("assemble", request, settings.assembleTimeoutMs);
      // a locked store still has its notes: the rules come from them (session_context reads them from disk)
      const rulesOnly =
        value === undefined && isLocked(link.lastFailure)
          ? await link.call("session_context", { budgetTokens: budget }, settings.assembleTimeoutMs, true)
          : undefined;
      if (value === undefined && rulesOnly === undefined) return plain;
      const items = ((value ?? rulesOnly)?.items ?? []) as Item[];
      const raw = value !== undefined ? value.systemPromptAddition : rulesOnly?.text;
      const text = fitAddition(String(raw ?? "").trim(), items, budget);
      if (!text) return plain;
      return { messages, estimatedTokens: used + hostTokens(text), systemPromptAddition: text };
    } catch (err) {
      this.parts.logger.warn(`botbin: no memory for this turn (${String(err)}); the turn goes on without it`);
      return plain;
    }
  }

  /** A session's first model call: what botbin buffered of the previous session is distilled (so this one can
   * recall it), and the notes are synced in the background (session_context starts that), so notes edited since
   * the last session are found. */
  private async sessionStart(sessionId: string, budget: number): Promise<void> {
    const start = this.parts.link.sessionStart(sessionId);
    if (start === "same") return;
    if (start === "switched") await this.parts.link.deliver(this.parts.spool, true);
    this.parts.link.nudge("session_context", { budgetTokens: budget }, this.parts.settings.ingestTimeoutMs);
  }

  async compact(params: CompactParams): Promise<CompactResult> {
    try {
      const ours = await this.compactWithBotbin(params);
      if (ours !== undefined) return ours;
    } catch (err) {
      this.parts.logger.warn(`botbin: compaction failed (${String(err)}); OpenClaw compacts instead`);
    }
    const runtime = await this.parts.runtimeCompaction().catch(() => undefined);
    if (runtime === undefined)
      return {
        ok: true,
        compacted: false,
        reason: "botbin could not compact and the host's compaction is unavailable",
      };
    return runtime(params);
  }

  /** botbin's compaction of the session's older messages; undefined when the host's should run instead. */
  private async compactWithBotbin(params: CompactParams): Promise<CompactResult | undefined> {
    const messages = this.lastMessages.get(params.sessionId);
    if (messages === undefined) return undefined;
    return (await this.fold(params.sessionId, messages, params.tokenBudget))?.result;
  }

  /** Fold the older of `messages` into botbin's summary when its confidence clears the floor: the record is kept
   * (every later assemble of the session applies it) and the messages the model sees now are returned. */
  private async fold(
    sessionId: string,
    messages: AgentMessage[],
    tokenBudget: number | undefined,
  ): Promise<{ messages: AgentMessage[]; result: CompactResult } | undefined> {
    const { settings, link, compactions, logger } = this.parts;
    const keepTokens = tokenBudget === undefined ? Infinity : tokenBudget / 2;
    const { fold } = splitForCompaction(messages, settings.keepRecentMessages, keepTokens);
    const folded = hostMessages(fold);
    if (folded.length < 2) return undefined;
    const tokensBefore = messagesTokens(fold);
    const budget = Math.max(MIN_BUDGET_TOKENS, Math.min(settings.budgetTokens, Math.floor(tokensBefore / 4)));
    const request: WireCompactParams = { messages: folded, budgetTokens: budget };
    const value = await link.call("compact", request, settings.compactTimeoutMs);
    if (value === undefined) return undefined;
    const summary = fitLines(String(value.summary ?? "").trim(), budget);
    const confidence = typeof value.confidence === "number" ? value.confidence : -1;
    if (!summary || confidence < settings.minCompactionConfidence) {
      logger.info(
        `botbin: summary confidence ${confidence.toFixed(2)} is under ${settings.minCompactionConfidence}; OpenClaw compacts instead`,
      );
      return undefined;
    }
    const record = {
      covered: coveredKeys(fold, compactions.get(sessionId)),
      summary,
      tokensBefore,
      tokensAfter: hostTokens(summary),
      confidence,
      timestamp: this.now(),
    };
    compactions.set(sessionId, record);
    const now = applyCompaction(messages, record);
    this.lastMessages.set(sessionId, now);
    logger.info(
      `botbin: folded ${fold.length} messages (${tokensBefore} tokens) into ${record.tokensAfter} (confidence ${confidence.toFixed(2)})`,
    );
    const details = { engine: ENGINE_ID, confidence, coverage: value.coverage, rulesKept: value.rulesKept };
    const result = { summary, tokensBefore, tokensAfter: record.tokensAfter, details };
    return { messages: now, result: { ok: true, compacted: true, result } };
  }

  async dispose(): Promise<void> {
    this.lastMessages.clear();
  }
}
