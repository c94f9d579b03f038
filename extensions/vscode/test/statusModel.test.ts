import { strict as assert } from "node:assert";
import { test } from "node:test";
import { statusView } from "../src/core/statusModel";
import { statusResult } from "./helpers/hits";

const idle = { active: false };
const running = { kind: "running" } as const;

test("up to date: chunks indexed, default colours", () => {
  const now = Date.parse("2026-11-29T13:24:26Z");
  const view = statusView({ server: running, progress: idle, status: statusResult(), now });
  assert.equal(view.text, "$(database) botbin: 46 chunks");
  assert.equal(view.severity, "ok");
  assert.match(view.tooltip, /15 notes, 46 chunks indexed/);
  assert.match(view.tooltip, /last sync: 2 min ago/);
});

test("last sync: relative, and moved by a sync that changed nothing (checkedAt)", () => {
  const now = Date.parse("2026-11-30T13:22:26Z");
  const old = statusView({ server: running, progress: idle, status: statusResult(), now });
  assert.match(old.tooltip, /last sync: 1 day ago/);
  const checked = statusView({
    server: running,
    progress: idle,
    status: statusResult(),
    now,
    checkedAt: "2026-11-30T13:22:20Z",
  });
  assert.match(checked.tooltip, /last sync: just now/);
  const never = statusView({ server: running, progress: idle, status: statusResult({ lastSync: null }), now });
  assert.match(never.tooltip, /last sync: never/);
});

test("no stale-notes warning while a sync runs (the status may predate it)", () => {
  const progress = { active: true, message: "ws: 120/900 chunks", percentage: 13 };
  const view = statusView({ server: running, progress, status: statusResult({ pending: 173 }) });
  assert.equal(view.severity, "ok");
  assert.doesNotMatch(view.tooltip, /changed since the last sync/);
  assert.match(view.tooltip, /120\/900 chunks/);
});

test("indexing: a spinner and the percentage", () => {
  const view = statusView({ server: running, progress: { active: true, message: "ws: 3/15 notes", percentage: 20 } });
  assert.equal(view.text, "$(sync~spin) botbin 20%");
  assert.match(view.tooltip, /indexing notes \(ws: 3\/15 notes\)/);
  const fromStatus = statusView({ server: running, progress: idle, status: statusResult({ indexing: true }) });
  assert.equal(fromStatus.text, "$(sync~spin) botbin");
});

test("degraded: a warning that search is keyword-only, and why", () => {
  const status = statusResult({ degraded: true });
  status.folders[0]!.modelError = "no model at /models/x";
  const view = statusView({ server: running, progress: idle, status });
  assert.equal(view.severity, "warning");
  assert.equal(view.text, "$(warning) botbin: 46 chunks (keywords only)"); // as in Obsidian: one status view
  assert.match(view.tooltip, /keyword search only: the embedding model is unavailable \(no model at \/models\/x\)/);
});

test("stale notes: a warning with the count", () => {
  const view = statusView({ server: running, progress: idle, status: statusResult({ pending: 2 }) });
  assert.equal(view.text, "$(warning) botbin: 46 chunks · 2 stale");
  assert.equal(view.severity, "warning");
  assert.match(view.tooltip, /2 notes changed since the last sync/);
});

test("a failed sync is a warning", () => {
  const status = statusResult();
  status.folders[0]!.lastError = "workspace locked by another sync";
  const view = statusView({ server: running, progress: idle, status });
  assert.equal(view.severity, "warning");
  assert.match(view.tooltip, /sync failed: workspace locked/);
});

test("server states: starting, restarting, failed, stopped", () => {
  assert.equal(statusView({ server: { kind: "starting" }, progress: idle }).text, "$(sync~spin) botbin");
  const restarting = statusView({ server: { kind: "restarting", delayMs: 2000, attempt: 2 }, progress: idle });
  assert.equal(restarting.severity, "warning");
  assert.match(restarting.tooltip, /restarting in 2 s \(attempt 2\)/);
  const failed = statusView({
    server: { kind: "failed", reason: "startFailed", error: "spawn ENOENT" },
    progress: idle,
  });
  assert.deepEqual([failed.text, failed.severity], ["$(error) botbin", "error"]);
  assert.match(failed.tooltip, /spawn ENOENT/);
  assert.equal(statusView({ server: { kind: "stopped" }, progress: idle }).severity, "ok");
  assert.equal(statusView({ server: running, progress: idle }).text, "$(database) botbin");
});

test("one chunk is singular", () => {
  const view = statusView({ server: running, progress: idle, status: statusResult({ chunks: 1 }) });
  assert.equal(view.text, "$(database) botbin: 1 chunk");
});
