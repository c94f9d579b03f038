import { strict as assert } from "node:assert";
import { test } from "node:test";
import { PROGRESS_TITLE } from "@botbin/protocol";
import { type IndexingProgress, ProgressTracker } from "../src/progress";

function tracker() {
  const seen: IndexingProgress[] = [];
  let ends = 0;
  const t = new ProgressTracker(
    (p) => seen.push(p),
    () => ends++,
  );
  return { t, seen, ends: () => ends };
}

test("begin, reports and end of one folder", () => {
  const { t, seen, ends } = tracker();
  t.update("a", { kind: "begin", title: PROGRESS_TITLE, message: "notes", percentage: 0 });
  assert.deepEqual(t.current, { active: true, message: "notes", percentage: 0 });
  t.update("a", { kind: "report", message: "3/15 notes", percentage: 20 });
  assert.deepEqual(t.current, { active: true, message: "notes: 3/15 notes", percentage: 20 });
  t.update("a", { kind: "end", message: "3 added" });
  assert.deepEqual(t.current, { active: false });
  assert.equal(seen.length, 3);
  assert.equal(ends(), 1);
});

test("several folders: the latest message, the mean percentage", () => {
  const { t } = tracker();
  t.update(1, { kind: "begin", title: PROGRESS_TITLE, message: "work", percentage: 0 });
  t.update(2, { kind: "begin", title: PROGRESS_TITLE, message: "vault", percentage: 0 });
  t.update(1, { kind: "report", message: "5/10 notes", percentage: 50 });
  assert.deepEqual(t.current, { active: true, message: "work: 5/10 notes", percentage: 25 });
  t.update(1, { kind: "end" });
  assert.deepEqual(t.current, { active: true, percentage: 0 });
});

test("other titles and unknown tokens are ignored; clear forgets everything", () => {
  const { t, seen } = tracker();
  t.update("x", { kind: "begin", title: "someone else's work" });
  t.update("y", { kind: "report", percentage: 10 });
  t.update("z", { kind: "end" });
  assert.equal(seen.length, 0);
  t.update("a", { kind: "begin", title: PROGRESS_TITLE });
  t.clear();
  assert.deepEqual(t.current, { active: false });
  assert.deepEqual(seen.at(-1), { active: false });
});
