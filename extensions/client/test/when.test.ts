import { strict as assert } from "node:assert";
import { test } from "node:test";
import { later, relativeTime } from "../src/when";

test("relative times for people", () => {
  const now = Date.parse("2026-11-29T13:22:26Z");
  assert.equal(relativeTime("2026-11-29T13:22:00Z", now), "just now");
  assert.equal(relativeTime("2026-11-29T13:20:26Z", now), "2 min ago");
  assert.equal(relativeTime("2026-11-29T10:22:26Z", now), "3 h ago");
  assert.equal(relativeTime("2026-11-28T13:22:26Z", now), "1 day ago");
  assert.equal(relativeTime("2026-11-24T13:22:26Z", now), "5 days ago");
  assert.equal(relativeTime(null, now), "never");
  assert.equal(relativeTime("not a time", now), "not a time");
  assert.equal(relativeTime("2026-11-29T13:30:00Z", now), "just now", "a clock ahead of ours is not 'in the future'");
});

test("the later of two times", () => {
  assert.equal(later("2026-11-29T13:22:26Z", "2026-11-29T13:25:00.000Z"), "2026-11-29T13:25:00.000Z");
  assert.equal(later("2026-11-29T13:22:26Z", undefined), "2026-11-29T13:22:26Z");
  assert.equal(later(null, "2026-11-29T13:22:26Z"), "2026-11-29T13:22:26Z");
  assert.equal(later(null, null), null);
});
