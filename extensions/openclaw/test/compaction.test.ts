import { strict as assert } from "node:assert";
import { test } from "node:test";
import type { AgentMessage, CompactResult } from "../src/host";
import { fakeBotbin, ok, rig, tempDir } from "./helpers";

function conversation(n: number): AgentMessage[] {
  const out: AgentMessage[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      role: "user",
      content: `question ${i} about the billing service`,
      idempotencyKey: `k${i}:user`,
      timestamp: 10 * i,
    });
    out.push({ role: "assistant", content: [{ type: "text", text: `answer ${i}` }], timestamp: 10 * i + 5 });
  }
  return out;
}

const RUNTIME: CompactResult = { ok: true, compacted: true, result: { summary: "host summary", tokensBefore: 9 } };

test("compact: botbin's summary replaces the older messages in every later assemble, the recent ones stay", async () => {
  const dir = tempDir();
  const bot = await fakeBotbin(dir.path, (r) =>
    r.op === "compact"
      ? ok({ summary: "- user: asked about the billing service", confidence: 0.82, coverage: 0.9, rulesKept: 0 })
      : ok({ systemPromptAddition: "", items: [] }),
  );
  try {
    const r = rig(dir.path, bot.socket, { keepRecentMessages: 4, minCompactionConfidence: 0.6 }, async () => RUNTIME);
    const messages = conversation(6); // 12 messages
    await r.engine.assemble({ sessionId: "s1", messages, tokenBudget: 100_000 });
    const result = await r.engine.compact({
      sessionId: "s1",
      sessionKey: "agent:main:main",
      tokenBudget: 100_000,
      force: true,
    });
    assert.equal(result.compacted, true);
    assert.equal(result.result?.summary, "- user: asked about the billing service");
    assert.deepEqual((result.result?.details as { confidence: number }).confidence, 0.82);
    assert.equal(r.runtimeCalls, 0);
    const folded = bot.requests.find((q) => q.op === "compact")!.messages as { role: string; content: string }[];
    assert.equal(folded.length, 8);
    assert.equal(folded[0]!.content, "question 0 about the billing service");
    // a later turn (a new process, the host's transcript unchanged and one turn longer) sees the summary
    const later = rig(dir.path, bot.socket);
    const next = [...messages, { role: "user", content: "and now?", idempotencyKey: "k9:user", timestamp: 999 }];
    const out = await later.engine.assemble({ sessionId: "s1", messages: next, tokenBudget: 100_000 });
    assert.equal(out.messages.length, 1 + 4 + 1);
    assert.equal(out.messages[0]!.role, "compactionSummary");
    assert.equal(out.messages[0]!.summary, "- user: asked about the billing service");
    assert.deepEqual(
      out.messages.slice(1).map((m) => m.idempotencyKey ?? m.timestamp),
      ["k4:user", 45, "k5:user", 55, "k9:user"],
    );
    // another session is untouched
    const other = await later.engine.assemble({ sessionId: "s2", messages, tokenBudget: 100_000 });
    assert.equal(other.messages.length, 12);
  } finally {
    await bot.close();
    dir.remove();
  }
});

test("compact: a summary under the confidence floor is not used; OpenClaw's own compaction runs", async () => {
  const dir = tempDir();
  const bot = await fakeBotbin(dir.path, () => ok({ summary: "- user: something", confidence: 0.31, coverage: 0.2 }));
  try {
    const r = rig(dir.path, bot.socket, { keepRecentMessages: 2, minCompactionConfidence: 0.6 }, async () => RUNTIME);
    await r.engine.assemble({ sessionId: "s1", messages: conversation(4), tokenBudget: 100_000 });
    const result = await r.engine.compact({ sessionId: "s1", sessionKey: "k", force: true });
    assert.deepEqual(result, RUNTIME);
    assert.equal(r.runtimeCalls, 1);
    assert.equal(r.compactions.get("s1"), undefined);
    assert.ok(
      r.logs.lines.some((l) => /confidence 0\.31 is under 0\.6/.test(l)),
      r.logs.lines.join("\n"),
    );
  } finally {
    await bot.close();
    dir.remove();
  }
});

test("compact with botbin gone, or without the messages (another process): OpenClaw compacts", async () => {
  const dir = tempDir();
  try {
    const r = rig(dir.path, `${dir.path}/run/none.sock`, { keepRecentMessages: 2 }, async () => RUNTIME);
    assert.deepEqual(await r.engine.compact({ sessionId: "s1", sessionKey: "k" }), RUNTIME, "never assembled here");
    await r.engine.assemble({ sessionId: "s1", messages: conversation(4), tokenBudget: 100_000 });
    assert.deepEqual(await r.engine.compact({ sessionId: "s1", sessionKey: "k" }), RUNTIME, "botbin gone");
    assert.equal(r.runtimeCalls, 2);
    const none = rig(dir.path, `${dir.path}/run/none.sock`);
    const result = await none.engine.compact({ sessionId: "s9", sessionKey: "k" });
    assert.deepEqual(
      [result.ok, result.compacted],
      [true, false],
      "no host compaction reachable: nothing, and no throw",
    );
  } finally {
    dir.remove();
  }
});

test("assemble folds the older messages first when they take most of the host's budget", async () => {
  const dir = tempDir();
  const bot = await fakeBotbin(dir.path, (r) =>
    r.op === "compact"
      ? ok({ summary: "- user: long reports about billing", confidence: 0.9, coverage: 1, rulesKept: 0 })
      : ok({ systemPromptAddition: "## Rules (always follow)\n- Prefer short answers.", items: [] }),
  );
  try {
    const r = rig(dir.path, bot.socket, { keepRecentMessages: 6, budgetTokens: 100 });
    const long = (i: number): AgentMessage => ({
      role: "user",
      content: "x".repeat(4000),
      idempotencyKey: `L${i}`,
      timestamp: i,
    });
    const messages = [long(1), long(2), long(3), long(4), long(5)]; // 5000 host tokens
    const out = await r.engine.assemble({ sessionId: "s1", messages, tokenBudget: 5500 });
    assert.equal(out.messages[0]!.role, "compactionSummary");
    assert.ok(out.estimatedTokens <= 5500, String(out.estimatedTokens));
    // the kept suffix is within half the budget: 2 messages of 1000 tokens
    assert.deepEqual(
      out.messages.slice(1).map((m) => m.idempotencyKey),
      ["L3", "L4", "L5"].slice(-2),
    );
    assert.equal(out.systemPromptAddition, "## Rules (always follow)\n- Prefer short answers.");
    assert.ok(
      r.logs.lines.some((l) => /folded 3 messages \(3000 tokens\)/.test(l)),
      r.logs.lines.join("\n"),
    );
    // under the share: nothing folded
    const small = rig(dir.path, bot.socket);
    const kept = await small.engine.assemble({ sessionId: "s2", messages: messages.slice(0, 2), tokenBudget: 5500 });
    assert.equal(kept.messages.length, 2);
  } finally {
    await bot.close();
    dir.remove();
  }
});
