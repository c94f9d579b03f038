// The engine's line to botbin: each op under its time limit, a server started when none answers, one log line
// when memory goes away (naming why) and one when it is back, the spool delivered, and which session was last seen.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type {
  AssembleParams as WireAssembleParams,
  AssembleResult as WireAssembleResult,
  CompactParams as WireCompactParams,
  CompactResult as WireCompactResult,
  IngestParams,
  IngestResult,
  SessionContextParams,
  SessionContextResult,
} from "@botbin/protocol";
import type { PluginLogger } from "./host";
import type { Settings } from "./settings";
import { ask as askSocket, type Failure, startServer as startBotbin, type StartRequest } from "./sidecar";
import type { Spool } from "./spool";

export interface LinkParts {
  socket: string;
  settings: Settings;
  /** The engine's own folder (spool, session, compactions, serve.log). */
  stateDir: string;
  logger: PluginLogger;
  ask?: typeof askSocket;
  start?: (req: StartRequest) => Promise<string | null>;
  now?: () => number;
}

/** What a user reads when memory is off for a turn. */
export function describeFailure(op: string, failure: Failure, timeoutMs: number): string {
  switch (failure.kind) {
    case "absent":
      return failure.message;
    case "timeout":
      return `botbin did not answer ${op} within ${timeoutMs} ms`;
    case "declined":
      return failure.message;
    case "error":
      if (isLocked(failure)) {
        return `the botbin store is encrypted and locked (start botbin serve with BOTBIN_PASSPHRASE): ${failure.message}`;
      }
      return `botbin answered ${op} with ${failure.errorKind ?? "an error"}: ${failure.message}`;
  }
}

/** The host ops this engine uses: their params and results, generated from server/botbin/wire/hosts.py. */
export interface Ops {
  assemble: [WireAssembleParams, WireAssembleResult];
  ingest: [IngestParams, IngestResult];
  compact: [WireCompactParams, WireCompactResult];
  session_context: [SessionContextParams, SessionContextResult];
}

/** True for the failures of an encrypted store whose passphrase the server lacks (its notes are still there). */
export function isLocked(failure: Failure | undefined): boolean {
  return failure?.kind === "error" && (failure.errorKind === "locked" || failure.errorKind === "wrong_passphrase");
}

/** The one line a user reads: what failed and what the turn does without it. */
export function consequence(op: keyof Ops, reason: string, locked: boolean, stateDir: string): string {
  if (op === "ingest") return `botbin: capture waits: ${reason}; the turns stay in ${stateDir} and go again next turn`;
  if (op === "compact") return `botbin: no summary from botbin: ${reason}; OpenClaw's own compaction applies`;
  const left = locked ? "with the rules of your notes only" : "without it";
  return `botbin: no memory for this turn: ${reason}; the turn goes on ${left}, turns wait in ${stateDir}`;
}

export class MemoryLink {
  private down: string | undefined;
  /** Why the last op gave nothing (undefined after an answer). */
  lastFailure: Failure | undefined;
  private readonly ask: typeof askSocket;
  private readonly start: (req: StartRequest) => Promise<string | null>;

  constructor(private readonly parts: LinkParts) {
    this.ask = parts.ask ?? askSocket;
    this.start = parts.start ?? startBotbin;
  }

  /** The op's result fields, or undefined (logged) when botbin gave none. A `fallback` op (the rules of a locked
   * store) answering does not mean memory is back. */
  async call<K extends keyof Ops>(
    op: K,
    params: Ops[K][0],
    timeoutMs: number,
    fallback = false,
  ): Promise<Partial<Ops[K][1]> | undefined> {
    const answer = await this.ask(this.parts.socket, op, params, timeoutMs);
    if (!fallback) this.lastFailure = answer.ok ? undefined : answer.failure;
    if (answer.ok) {
      if (fallback) return answer.value as Partial<Ops[K][1]>;
      if (this.down !== undefined) this.parts.logger.info(`botbin: memory is back (${this.parts.settings.workspace})`);
      this.down = undefined;
      return answer.value as Partial<Ops[K][1]>;
    }
    // one line per kind of trouble, not per op: a turn whose assemble and capture both time out logs once
    let started = "";
    if (answer.failure.kind === "absent" && this.parts.settings.startServer) started = await this.startServer();
    const key = `${answer.failure.kind}:${answer.failure.errorKind ?? ""}`;
    if (this.down === key) return undefined;
    this.down = key;
    const reason = describeFailure(op, answer.failure, timeoutMs) + started;
    this.parts.logger.warn(consequence(op, reason, isLocked(answer.failure), this.parts.stateDir));
    return undefined;
  }

  private async startServer(): Promise<string> {
    const { settings, stateDir } = this.parts;
    const now = (this.parts.now ?? Date.now)();
    const why = await this.start({
      botbinPath: settings.botbinPath,
      workspace: settings.workspace,
      idleExitS: settings.serverIdleExitS,
      stateDir,
      nowMs: now,
    });
    return why === null
      ? `; starting \`${settings.botbinPath} serve\` (log: ${join(stateDir, "serve.log")})`
      : `; ${why}`;
  }

  /** Send the spool's turns (and distil what the server buffers when `flush`); drop them once acknowledged: the
   * server journals what it accepts before it answers, so a server killed afterwards loses none of them. */
  async deliver(spool: Spool, flush: boolean): Promise<void> {
    const turns = spool.read();
    if (turns.length === 0 && !flush) return;
    const user = this.parts.settings.user;
    const params: IngestParams = { turns, flush, ...(user !== undefined ? { user } : {}) };
    const value = await this.call("ingest", params, this.parts.settings.ingestTimeoutMs);
    if (value !== undefined) spool.remove(new Set(turns.map((t) => t.id)));
  }

  /** Send an op whose answer nobody waits for (it is asked for its effect): no log, no state, never throws. */
  nudge<K extends keyof Ops>(op: K, params: Ops[K][0], timeoutMs: number): void {
    void this.ask(this.parts.socket, op, params, timeoutMs).catch(() => undefined);
  }

  /** Whether `sessionId` is the session this workspace's engine saw last ("same"), the first one it ever sees
   * ("first"), or a new one after another ("switched": the previous session is over). Recorded at once. */
  sessionStart(sessionId: string): "same" | "first" | "switched" {
    const path = join(this.parts.stateDir, "session");
    let last = "";
    try {
      last = readFileSync(path, "utf8").trim();
    } catch {
      // first session here
    }
    if (last === sessionId) return "same";
    mkdirSync(this.parts.stateDir, { recursive: true, mode: 0o700 });
    writeFileSync(path, sessionId);
    return last === "" ? "first" : "switched";
  }
}
