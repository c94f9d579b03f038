import { strict as assert } from "node:assert";
import { test } from "node:test";
import type { AgentMessage } from "../src/host";
import { hostTokens } from "../src/messages";
import { fakeBotbin, ok, rig, tempDir } from "./helpers";

const RULES = "## Rules (always follow)\n- Always answer in British English.\n- Never deploy on Fridays.";
const RECALLED = "## Related memories\n- [a1b2] The staging database is pg-staging-7.\n- [c3d4] Ana owns billing.";
const ITEMS = [
  { id: "r1", tier: "hard", text: "Always answer in British English." },
  { id: "r2", tier: "hard", text: "Never deploy on Fridays." },
  { id: "a1b2", tier: "recalled", text: "The staging database is pg-staging-7." },
];

function user(text: string, key: string, at = 1): AgentMessage {
  return { role: "user", content: text, idempotencyKey: key, timestamp: at };
}
function assistant(text: string, at: number): AgentMessage {
  return { role: "assistant", content: [{ type: "text", text }], timestamp: at };
}

test("assemble: botbin's tiers become systemPromptAddition; the messages pass through untouched", async () => {
  const dir = tempDir();
  const bot = await fakeBotbin(dir.path, (r) =>
    r.op === "assemble" ? ok({ systemPromptAddition: `${RULES}\n\n${RECALLED}`, items: ITEMS }) : ok({}),
  );
  try {
    const { engine } = rig(dir.path, bot.socket, { budgetTokens: 500 });
    const messages = [user("Which database does staging use?", "t1:user")];
    const out = await engine.assemble({
      sessionId: "s1",
      messages,
      tokenBudget: 10_000,
      prompt: "Which database does staging use?",
    });
    assert.deepEqual(out.messages, messages);
    assert.equal(out.systemPromptAddition, `${RULES}\n\n${RECALLED}`);
    assert.equal(
      out.estimatedTokens,
      hostTokens("Which database does staging use?") + hostTokens(out.systemPromptAddition ?? ""),
    );
    const request = bot.requests.find((r) => r.op === "assemble")!;
    assert.equal(request.v, 1);
    assert.equal(request.budgetTokens, 500);
    assert.equal(request.prompt, "Which database does staging use?");
    assert.deepEqual(Object.keys(request).sort(), [
      "budgetTokens",
      "maxChars",
      "messages",
      "op",
      "prompt",
      "session",
      "v",
    ]);
  } finally {
    await bot.close();
    dir.remove();
  }
});

test("assemble: the budget asked is what the host has left, and the addition never exceeds it", async () => {
  const dir = tempDir();
  // a server whose count is lower than the host's (WordPiece vs chars / 4): it returns more than fits
  const long = `${RULES}\n\n${RECALLED}\n${"- [ffff] a long recalled line about other things entirely\n".repeat(40)}`;
  const bot = await fakeBotbin(dir.path, () => ok({ systemPromptAddition: long, items: ITEMS }));
  try {
    const { engine } = rig(dir.path, bot.socket, { budgetTokens: 5000 });
    const messages = [user("x".repeat(4 * 900), "t1:user")]; // 900 host tokens
    const out = await engine.assemble({ sessionId: "s1", messages, tokenBudget: 1000, prompt: "x" });
    assert.equal(bot.requests[0]!.budgetTokens, 100);
    const addition = out.systemPromptAddition ?? "";
    assert.ok(hostTokens(addition) <= 100, `${hostTokens(addition)} tokens`);
    assert.ok(addition.includes("Never deploy on Fridays."), "the rules come first and stay");
    assert.ok(out.estimatedTokens <= 1000);
  } finally {
    await bot.close();
    dir.remove();
  }
});

test("assemble: when a cut would drop a rule, no addition at all (a rule is never cut)", async () => {
  const dir = tempDir();
  const bot = await fakeBotbin(dir.path, () => ok({ systemPromptAddition: RULES, items: ITEMS }));
  try {
    const { engine } = rig(dir.path, bot.socket, { budgetTokens: 20 });
    const out = await engine.assemble({ sessionId: "s1", messages: [], tokenBudget: 10_000 });
    assert.equal(out.systemPromptAddition, undefined);
    assert.deepEqual(out.messages, []);
  } finally {
    await bot.close();
    dir.remove();
  }
});

test("assemble with no budget left asks nothing", async () => {
  const dir = tempDir();
  const bot = await fakeBotbin(dir.path, () => ok({ systemPromptAddition: RULES, items: [] }));
  try {
    const { engine } = rig(dir.path, bot.socket);
    const messages = [user("x".repeat(4000), "t1:user")];
    const out = await engine.assemble({ sessionId: "s1", messages, tokenBudget: 1005 });
    assert.equal(out.systemPromptAddition, undefined);
    assert.equal(bot.requests.length, 0);
  } finally {
    await bot.close();
    dir.remove();
  }
});

for (const [name, script, expect] of [
  ["a slow answer", () => "hang" as const, /did not answer assemble within 200 ms/],

  ["another version", () => ({ v: 9, served: false, reason: "protocol 9" }), /declined/],
] as const) {
  test(`assemble falls back to the plain messages on ${name}, with one log line`, async () => {
    const dir = tempDir();
    const bot = await fakeBotbin(dir.path, script);
    try {
      const { engine, logs } = rig(dir.path, bot.socket, { assembleTimeoutMs: 200 });
      const messages = [user("hello", "t1:user")];
      for (let i = 0; i < 2; i++) {
        const out = await engine.assemble({ sessionId: "s1", messages, tokenBudget: 10_000, prompt: "hello" });
        assert.deepEqual(out.messages, messages);
        assert.equal(out.systemPromptAddition, undefined);
      }
      assert.equal(logs.lines.length, 1, logs.lines.join("\n"));
      assert.match(logs.lines[0]!, expect);
      assert.match(logs.lines[0]!, /the turn goes on without it/);
    } finally {
      await bot.close();
      dir.remove();
    }
  });
}

test("a locked store: the rules still come (read from the notes), recall is off, one log line", async () => {
  const dir = tempDir();
  const locked = { kind: "locked", message: "/n/memory/aifbin/encryption.json: this store is encrypted" };
  const bot = await fakeBotbin(dir.path, (r) =>
    r.op === "session_context" ? ok({ text: RULES, items: ITEMS.slice(0, 2) }) : { v: 1, ok: false, error: locked },
  );
  try {
    const { engine, logs } = rig(dir.path, bot.socket);
    for (let i = 0; i < 2; i++) {
      const out = await engine.assemble({ sessionId: "s1", messages: [], tokenBudget: 10_000, prompt: "hello" });
      assert.equal(out.systemPromptAddition, RULES);
    }
    const ops = bot.requests.map((r) => r.op as string).sort();
    // two assembles, two fallbacks, and the session start's nudge (which starts a sync of the notes)
    assert.deepEqual(ops, ["assemble", "assemble", "session_context", "session_context", "session_context"]);
    assert.equal(logs.lines.length, 1, logs.lines.join("\n"));
    assert.match(logs.lines[0]!, /encrypted and locked \(start botbin serve with BOTBIN_PASSPHRASE\)/);
    assert.match(logs.lines[0]!, /goes on with the rules of your notes only/);
  } finally {
    await bot.close();
    dir.remove();
  }
});

test("no server: the plain messages, one line, and a server started (once per state change)", async () => {
  const dir = tempDir();
  try {
    const r = rig(dir.path, `${dir.path}/run/none.sock`, { startServer: true });
    const out = await r.engine.assemble({ sessionId: "s1", messages: [], tokenBudget: 10_000, prompt: "hi" });
    assert.equal(out.systemPromptAddition, undefined);
    assert.equal(r.started.length, 1);
    assert.equal(r.logs.lines.length, 1);
    assert.match(r.logs.lines[0]!, /no server|not a private folder/);
    assert.match(r.logs.lines[0]!, /starting `botbin serve`/);
  } finally {
    dir.remove();
  }
});

test("commitTurn: the turn's words go to ingest with stable ids; host context and tool traffic do not", async () => {
  const dir = tempDir();
  const bot = await fakeBotbin(dir.path, (r) => ok({ accepted: (r.turns as unknown[]).length, pending: [] }));
  try {
    const { engine, spool } = rig(dir.path, bot.socket, { user: "Sam" });
    const messages: AgentMessage[] = [
      user("By the way, from now on, call me Sam.", "k1:user", 1000),
      {
        role: "user",
        content: [{ type: "text", text: "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nnone" }],
        timestamp: 1001,
      },
      { role: "toolResult", content: [{ type: "text", text: "ls output" }], timestamp: 1002 },
      assistant("Sure, Sam.", 2000),
    ];
    assert.deepEqual(await engine.commitTurn({ advancementKey: "k1", messages, sessionId: "s1" }), {
      status: "committed",
    });
    const ingest = bot.requests.find((r) => r.op === "ingest")!;
    const turns = ingest.turns as { role: string; content: string; id: string; session: string; timestamp: string }[];
    assert.deepEqual(
      turns.map((t) => [t.role, t.content]),
      [
        ["user", "By the way, from now on, call me Sam."],
        ["assistant", "Sure, Sam."],
      ],
    );
    assert.equal(turns[0]!.id, "openclaw:s1:k1:user");
    assert.equal(turns[0]!.timestamp, new Date(1000).toISOString());
    assert.equal(turns[1]!.session, "s1");
    assert.equal(ingest.user, "Sam");
    assert.deepEqual(spool.read(), [], "acknowledged and written: nothing left to send");
  } finally {
    await bot.close();
    dir.remove();
  }
});

test("commitTurn with botbin gone: committed for the host, the turns kept and sent on the next contact", async () => {
  const dir = tempDir();
  try {
    const gone = rig(dir.path, `${dir.path}/run/botbin.sock`);
    const first = [user("The deploy key is in vault kv/deploy-2291.", "k1:user", 1), assistant("Noted.", 2)];
    assert.deepEqual(await gone.engine.commitTurn({ advancementKey: "k1", messages: first, sessionId: "s1" }), {
      status: "committed",
    });
    assert.equal(gone.spool.read().length, 2);
    const bot = await fakeBotbin(dir.path, (r) => {
      const ids = (r.turns as { id: string }[]).map((t) => t.id);
      return ok({ accepted: ids.length, pending: ids.slice(-1) }); // buffered, but journaled before the answer
    });
    try {
      const back = rig(dir.path, bot.socket);
      await back.engine.commitTurn({
        advancementKey: "k2",
        messages: [user("Thanks.", "k2:user", 3)],
        sessionId: "s1",
      });
      const sent = (bot.requests[0]!.turns as { content: string }[]).map((t) => t.content);
      assert.deepEqual(sent, ["The deploy key is in vault kv/deploy-2291.", "Noted.", "Thanks."]);
      assert.deepEqual(back.spool.read(), [], "acknowledged: the server journals what it accepts before it answers");
    } finally {
      await bot.close();
    }
  } finally {
    dir.remove();
  }
});

test("a new session distils what botbin buffered, and starts a sync of the notes, before its first assemble", async () => {
  const dir = tempDir();
  const bot = await fakeBotbin(dir.path, (r) =>
    r.op === "ingest" ? ok({ pending: [] }) : ok({ systemPromptAddition: "", items: [] }),
  );
  try {
    const { engine } = rig(dir.path, bot.socket);
    await engine.assemble({ sessionId: "s1", messages: [], tokenBudget: 10_000, prompt: "a" });
    await engine.assemble({ sessionId: "s1", messages: [], tokenBudget: 10_000, prompt: "b" });
    await engine.assemble({ sessionId: "s2", messages: [], tokenBudget: 10_000, prompt: "c" });
    const ops = bot.requests.map((r) => `${r.op}${r.flush ? "+flush" : ""}`);
    const main = ops.filter((op) => op !== "session_context"); // the nudges that start a sync arrive in any order
    assert.deepEqual(main, ["assemble", "assemble", "ingest+flush", "assemble"]);
    assert.equal(ops.filter((op) => op === "session_context").length, 2, "one per session start");
  } finally {
    await bot.close();
    dir.remove();
  }
});
