// Host messages as botbin reads them: their text, their size in the host's own count, a stable key, and the turns
// that conversation capture takes (what the user and the assistant said; tool traffic and the host's own context
// carriers are not memory).
import { createHash } from "node:crypto";
import type { AgentMessage } from "./host";

/** OpenClaw's runtime-context carrier (active exec sessions, subagents...): host bookkeeping, not conversation. */
const HOST_CONTEXT_MARK = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";
/** The framing `openclaw acp` (the IDE bridge) puts before a prompt: not the user's words. */
const HOST_FRAMING = /^\[Working directory: [^\]\n]*\]\s*/;

/** What the user said: `text` without the host's framing. */
export function userWords(text: string): string {
  return text.replace(HOST_FRAMING, "");
}

/** The text of a message: its text blocks (or its summary), joined by blank lines. */
export function messageText(message: AgentMessage): string {
  if (typeof message.summary === "string" && message.content === undefined) return message.summary;
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((block) => block && block.type === "text" && typeof block.text === "string")
    .map((block) => block.text as string)
    .join("\n\n");
}

/** Tokens of `text` as OpenClaw counts them (ceil(chars / 4), UTF-16 code units as JavaScript counts them). */
export function hostTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Tokens of a message as OpenClaw counts them (its compaction.estimateTokens: text chars / 4). */
export function messageTokens(message: AgentMessage): number {
  if (message.excludeFromContext === true) return 0;
  return hostTokens(messageText(message));
}

export function messagesTokens(messages: readonly AgentMessage[]): number {
  return messages.reduce((sum, m) => sum + messageTokens(m), 0);
}

/** A key that names the same message in every list the host hands over (its idempotency key when it has one). */
export function messageKey(message: AgentMessage): string {
  if (typeof message.idempotencyKey === "string" && message.idempotencyKey) return message.idempotencyKey;
  const digest = createHash("sha256").update(messageText(message), "utf8").digest("hex").slice(0, 16);
  return `${message.role}:${String(message.timestamp ?? "")}:${digest}`;
}

/** One turn for botbin's `ingest` (wire IngestTurn). */
export interface Turn {
  role: string;
  content: string;
  id: string;
  timestamp?: string;
  session: string;
}

function isoTime(stamp: number | string | undefined): string | undefined {
  if (stamp === undefined) return undefined;
  const date = new Date(typeof stamp === "number" ? stamp : Date.parse(stamp));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The turns of `messages` worth capturing: user and assistant text, in order, each with a stable id. */
export function turnsOf(messages: readonly AgentMessage[], sessionId: string): Turn[] {
  const turns: Turn[] = [];
  for (const message of messages) {
    if (message.role !== "user" && message.role !== "assistant") continue;
    const text = messageText(message).trim();
    const content = message.role === "user" ? userWords(text) : text;
    if (!content || content.startsWith(HOST_CONTEXT_MARK)) continue;
    const turn: Turn = {
      role: message.role,
      content,
      id: `openclaw:${sessionId}:${messageKey(message)}`,
      session: sessionId,
    };
    const timestamp = isoTime(message.timestamp);
    if (timestamp !== undefined) turn.timestamp = timestamp;
    turns.push(turn);
  }
  return turns;
}

/** `text` cut after whole lines so that it is at most `budget` host tokens ("" when not even a line fits). */
export function fitLines(text: string, budget: number): string {
  if (hostTokens(text) <= budget) return text;
  const lines = text.split("\n");
  while (lines.length > 0 && hostTokens(lines.join("\n")) > budget) lines.pop();
  return lines.join("\n").trimEnd();
}
