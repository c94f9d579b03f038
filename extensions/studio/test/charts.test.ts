import { strict as assert } from "node:assert";
import { test } from "node:test";
import { curveLayout, scoreSegments, tokenSegments } from "../src/charts";

test("a score bar lays the positive parts side by side and cuts the decay back from their end", () => {
  const parts = [
    { name: "cosine", points: 0.2 },
    { name: "keywords", points: 0.1 },
    { name: "note", points: 0.05 },
    { name: "decay", points: -0.05 },
  ];
  const { segments, loss } = scoreSegments(parts);
  assert.deepEqual(
    segments.map((s) => [s.name, Math.round(s.start), Math.round(s.width)]),
    [
      ["cosine", 0, 20],
      ["keywords", 20, 10],
      ["note", 30, 5],
    ],
  );
  assert.ok(loss);
  assert.equal(Math.round(loss.start), 30);
  assert.equal(Math.round(loss.width), 5);
});

test("a score bar never runs past its end, and a negative cosine adds nothing", () => {
  const { segments, loss } = scoreSegments([
    { name: "cosine", points: -0.1 },
    { name: "keywords", points: 0.9 },
    { name: "note", points: 0.4 },
  ]);
  assert.deepEqual(
    segments.map((s) => s.name),
    ["keywords", "note"],
  );
  assert.equal(
    segments.reduce((sum, s) => sum + s.width, 0),
    100,
  );
  assert.equal(loss?.width ?? 0, 10, "the negative cosine is shown as taken away");
});

test("a token bar gives each tier its share of the budget", () => {
  const segments = tokenSegments(
    [
      { name: "hard", tokens: 200 },
      { name: "guidance", tokens: 0 },
      { name: "recent", tokens: 300 },
    ],
    1000,
  );
  assert.deepEqual(
    segments.map((s) => [s.name, s.start, s.width]),
    [
      ["hard", 0, 20],
      ["recent", 20, 30],
    ],
  );
});

test("a retention curve spans its box, with today and the threshold placed", () => {
  const layout = curveLayout(
    [
      { day: -10, score: 1 },
      { day: 0, score: 0.8 },
      { day: 30, score: 0.4 },
    ],
    0.05,
    100,
    20,
  );
  assert.ok(layout);
  assert.equal(layout.path, "M0.00 0.00 L25.00 4.00 L100.00 12.00");
  assert.equal(layout.nowX, 25);
  assert.equal(layout.thresholdY, 19);
  assert.deepEqual(layout.start, { x: 0, y: 0 });
  assert.equal(curveLayout([{ day: 0, score: 1 }], 0.05, 100, 20), null);
});
