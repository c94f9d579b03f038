// botbin's compaction as the engine applies it: the older messages of a session folded into botbin's extractive
// summary (rules kept verbatim) when its embedding-space confidence clears the floor. The host's transcript is not
// rewritten: a record (which messages, which summary) is kept in the engine's state folder, and every later
// `assemble` puts the summary where the folded messages were, so the record survives one-shot processes.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { AgentMessage } from "./host";
import { messageKey, messageText, messageTokens } from "./messages";

/** One session's compaction. */
export interface CompactionRecord {
  /** Keys (messages.messageKey) of the messages the summary replaces. */
  covered: string[];
  /** botbin's summary. */
  summary: string;
  /** Host tokens of the folded messages. */
  tokensBefore: number;
  /** Host tokens of the summary. */
  tokensAfter: number;
  /** Cosine of the summary to the folded messages (botbin's confidence). */
  confidence: number;
  /** When it was made, milliseconds. */
  timestamp: number;
}

/** The messages the model sees: the record's summary in place of the messages it folded. */
export function applyCompaction(
  messages: readonly AgentMessage[],
  record: CompactionRecord | undefined,
): AgentMessage[] {
  if (record === undefined) return [...messages];
  const covered = new Set(record.covered);
  const out: AgentMessage[] = [];
  let placed = false;
  for (const message of messages) {
    if (!covered.has(messageKey(message))) {
      out.push(message);
      continue;
    }
    if (!placed) {
      out.push({
        role: "compactionSummary",
        summary: record.summary,
        tokensBefore: record.tokensBefore,
        timestamp: record.timestamp,
      });
      placed = true;
    }
  }
  return out;
}

/** The split of `messages` for a compaction: the older ones to fold, and kept verbatim the last ones, at most
 * `keepRecent` of them within `keepTokens` host tokens (the last message always). */
export function splitForCompaction(
  messages: readonly AgentMessage[],
  keepRecent: number,
  keepTokens = Infinity,
): { fold: AgentMessage[]; keep: AgentMessage[] } {
  let cut = messages.length;
  let kept = 0;
  while (cut > 0 && messages.length - cut < keepRecent) {
    const size = messageTokens(messages[cut - 1]!);
    if (cut < messages.length && kept + size > keepTokens) break;
    kept += size;
    cut -= 1;
  }
  return { fold: messages.slice(0, cut), keep: messages.slice(cut) };
}

/** Keys the new record covers: what the folded messages were (an earlier summary stands for its own). */
export function coveredKeys(fold: readonly AgentMessage[], previous: CompactionRecord | undefined): string[] {
  const keys = new Set<string>();
  for (const message of fold) {
    if (message.role === "compactionSummary" && previous !== undefined) previous.covered.forEach((k) => keys.add(k));
    else keys.add(messageKey(message));
  }
  return [...keys];
}

/** The folded messages as botbin's `compact` reads them (an earlier summary as a system message). */
export function hostMessages(fold: readonly AgentMessage[]): { role: string; content: string }[] {
  return fold
    .map((m) => ({ role: m.role === "compactionSummary" ? "system" : m.role, content: messageText(m).trim() }))
    .filter((m) => m.content.length > 0);
}

/** The records of every session, in one JSON file; a missing or damaged file is no record. */
export class CompactionStore {
  constructor(readonly path: string) {}

  private readAll(): Record<string, CompactionRecord> {
    try {
      const data = JSON.parse(readFileSync(this.path, "utf8")) as unknown;
      return data !== null && typeof data === "object" ? (data as Record<string, CompactionRecord>) : {};
    } catch {
      return {};
    }
  }

  get(sessionId: string): CompactionRecord | undefined {
    const record = this.readAll()[sessionId];
    return record && Array.isArray(record.covered) && typeof record.summary === "string" ? record : undefined;
  }

  set(sessionId: string, record: CompactionRecord): void {
    const all = this.readAll();
    all[sessionId] = record;
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, JSON.stringify(all), { mode: 0o600 });
    renameSync(tmp, this.path);
  }
}
