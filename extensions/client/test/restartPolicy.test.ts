import { strict as assert } from "node:assert";
import { test } from "node:test";
import { RestartPolicy } from "../src/restartPolicy";

const crash = (uptimeMs = 1000) => ({ started: true, uptimeMs });

test("crashes in a row wait 0.5, 1, 2, 4, 8, 16 s, then the policy gives up", () => {
  const policy = new RestartPolicy();
  const delays = [1, 2, 3, 4, 5, 6].map(() => {
    const decision = policy.onExit(crash());
    assert.equal(decision.action, "restart");
    return decision.action === "restart" ? decision.delayMs : -1;
  });
  assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000, 16000]);
  assert.deepEqual(policy.onExit(crash()), { action: "giveUp", reason: "crashLoop" });
});

test("the wait never exceeds maxDelayMs", () => {
  const policy = new RestartPolicy({ maxCrashes: 20, maxDelayMs: 3000 });
  const last = Array.from({ length: 10 }, () => policy.onExit(crash())).at(-1);
  assert.deepEqual(last, { action: "restart", delayMs: 3000, attempt: 10 });
});

test("a server that ran long enough starts a new series", () => {
  const policy = new RestartPolicy({ stableAfterMs: 60_000 });
  policy.onExit(crash());
  policy.onExit(crash());
  assert.deepEqual(policy.onExit(crash(60_000)), { action: "restart", delayMs: 500, attempt: 1 });
});

test("a server that never started is not retried: the settings are wrong", () => {
  const policy = new RestartPolicy();
  assert.deepEqual(policy.onExit({ started: false, uptimeMs: 0 }), { action: "giveUp", reason: "startFailed" });
});

test("reset forgets the crashes", () => {
  const policy = new RestartPolicy({ maxCrashes: 1 });
  policy.onExit(crash());
  assert.equal(policy.onExit(crash()).action, "giveUp");
  policy.reset();
  assert.deepEqual(policy.onExit(crash()), { action: "restart", delayMs: 500, attempt: 1 });
});
