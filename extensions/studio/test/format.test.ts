import { strict as assert } from "node:assert";
import { test } from "node:test";
import { days, lines, place, points, score, when } from "../src/format";

test("lines as editors count them", () => {
  assert.equal(lines(2, 3), "L3");
  assert.equal(lines(2, 5), "L3-5");
  assert.equal(place("memory/a.md", 0, 4), "memory/a.md:L1-4");
});

test("scores and signed points", () => {
  assert.equal(score(0.34849), "0.348");
  assert.equal(score(-0.0000001), "0.000");
  assert.equal(points(0.08), "+0.080");
  assert.equal(points(-0.012), "-0.012");
  assert.equal(points(-0.0000001), "0.000");
});

test("days ahead in words", () => {
  assert.equal(days(null), "never");
  assert.equal(days(0), "now");
  assert.equal(days(0.25), "in 6 h");
  assert.equal(days(3.46), "in 3.5 days");
  assert.equal(days(129.6), "in 130 days");
  assert.equal(days(730), "in 2.0 years");
});

test("times with how long ago", () => {
  const now = Date.parse("2026-12-03T11:00:00Z");
  assert.equal(when("2026-12-03T08:11:28Z", now), "2026-12-03 08:11 UTC (3 h ago)");
  assert.equal(when(null, now), "never");
});
