import { strict as assert } from "node:assert";
import { test } from "node:test";
import type { FolderSyncSummary } from "@botbin/protocol";
import { hitItem, messageItem, resultCaveat, resultItems } from "../src/core/hits";
import { failureMessage, notRunningMessage } from "../src/core/messages";
import { statusLines, syncReport } from "../src/core/reports";
import { hit, searchResult, statusResult } from "./helpers/hits";

const folder = (over: Partial<FolderSyncSummary> = {}): FolderSyncSummary => ({
  uri: "file:///ws",
  error: null,
  errorKind: null,
  added: ["a.md"],
  modified: [],
  deleted: [],
  excluded: [],
  keptExcluded: [],
  rechunked: [],
  renamed: [],
  unchanged: 3,
  failed: [],
  warnings: [],
  chunksEmbedded: 0,
  chunksReused: 0,
  elapsedMs: 0,
  ...over,
});

test("sync summary: counts over the folders", () => {
  const report = syncReport({ done: true, folders: [folder(), folder({ modified: ["b.md"], unchanged: 1 })] }, "sync");
  assert.deepEqual(report, {
    message: "botbin: synced (2 added, 1 modified, 0 deleted, 4 unchanged)",
    severity: "info",
  });
  assert.match(syncReport({ done: true, folders: [folder()] }, "reindex").message, /^botbin: reindexed/);
});

test("sync summary: failures, errors and a sync still running", () => {
  const failed = syncReport(
    { done: true, folders: [folder({ failed: [{ path: "x.md", reason: "not UTF-8" }] })] },
    "sync",
  );
  assert.equal(failed.severity, "warning");
  assert.match(failed.message, /1 note failed: x.md \(not UTF-8\)/);
  const error = syncReport({ done: true, folders: [folder({ error: "workspace locked" })] }, "sync");
  assert.deepEqual(error, { message: "botbin: sync failed: workspace locked", severity: "error" });
  assert.match(syncReport({ done: false, folders: [folder()] }, "sync").message, /still running/);
});

test("status lines: totals, problems, folders, stale notes and conflicts that open their file", () => {
  const status = statusResult({ pending: 1 });
  status.folders[0]!.stale = [{ path: "memory/2026-11-02.md", reason: "modified" }];
  status.folders[0]!.conflicts = [
    {
      action: "use tabs",
      message: "“Always use tabs” conflicts with “Never use tabs”",
      first: {
        path: "MEMORY.md",
        line: 4,
        kind: "hard",
        modality: "obligation",
        cue: "Always",
        text: "Always use tabs",
      },
      second: {
        path: "AGENTS.md",
        line: 9,
        kind: "hard",
        modality: "prohibition",
        cue: "Never",
        text: "Never use tabs",
      },
    },
  ];
  status.folders[0]!.encryption = "on";
  const lines = statusLines(status);
  assert.equal(lines[0]!.label, "$(database) 15 notes, 46 chunks");
  assert.equal(lines.find((l) => l.label === "$(folder) /ws")?.detail, "last sync 2026-11-29T13:22:26Z · encrypted");
  assert.ok(lines.some((l) => l.label.startsWith("$(warning) 1 note changed since the last sync")));
  const stale = lines.find((l) => l.label === "$(history) memory/2026-11-02.md");
  assert.equal(stale?.path, "/ws/memory/2026-11-02.md");
  const conflict = lines.find((l) => l.label === "$(warning) conflicting rules: use tabs");
  assert.deepEqual(
    [conflict?.path, conflict?.line, conflict?.description],
    ["/ws/MEMORY.md", 4, "MEMORY.md:5 vs AGENTS.md:10"],
  );
});

test("hit items show heading path, note and line (1-based), score and a one-line snippet", () => {
  const item = hitItem(hit());
  assert.equal(item.label, "$(note) Lighthouse › Decisions");
  assert.equal(item.description, "MEMORY.md:33 · 0.71");
  assert.equal(item.detail, "Postgres over SQLite (2026-09): several server replicas need one shared …");
  assert.equal(item.alwaysShow, true);
  assert.equal(hitItem(hit({ headingPath: [] })).label, "$(note) MEMORY");
  const long = `${"word ".repeat(100)}end`; // the server's snippet is shown whole, never cut by the client
  assert.equal(hitItem(hit({ snippet: long })).detail, long);
  assert.equal(hitItem(hit({ snippet: "**bold** `code`" })).detail, "**bold** `code`"); // no markdown munging
  assert.deepEqual(messageItem("No memories match"), { label: "No memories match", alwaysShow: true });
  assert.equal(resultCaveat({ indexing: false, degraded: false }), undefined);
  assert.equal(
    resultCaveat({ indexing: true, degraded: true }),
    "indexing: results so far; keyword match only: the model is unavailable",
  );
  assert.equal(resultCaveat({ indexing: false, degraded: false, hidden: 0 }), undefined);
  assert.equal(resultCaveat({ indexing: false, degraded: false, hidden: 1 }), "1 weak match hidden");
  assert.equal(
    resultCaveat({ indexing: true, degraded: false, hidden: 3 }),
    "indexing: results so far; 3 weak matches hidden",
  );
});

test("the hits the server sends are listed in its order (it left out the weak ones); an empty index says it is indexing", () => {
  const weak = hit({ path: "weak.md", cosine: 0.15, bm25: 1, bm25Share: 0.1 }); // sent only when showAll asked
  const keyword = hit({ path: "keyword.md", cosine: 0.1, bm25: 0.6, bm25Share: 0.6 });
  assert.deepEqual(
    resultItems(searchResult([hit(), keyword, weak])).map((i) => i.hit?.path),
    ["MEMORY.md", "keyword.md", "weak.md"],
  );
  assert.deepEqual(
    resultItems(searchResult([])).map((i) => [i.label, i.hit]),
    [["No memories match", undefined]],
  );
  assert.deepEqual(
    resultItems(searchResult([], { indexing: true })).map((i) => i.label),
    ["$(sync~spin) Indexing… no memories match yet"],
  );
});

test("failure messages name the command line and what to set", () => {
  const message = failureMessage("startFailed", "python3 -m botbin lsp", "No module named botbin");
  assert.match(message, /did not start \(python3 -m botbin lsp\): No module named botbin/);
  assert.match(message, /"botbin.server.path"/);
  assert.match(message, /"botbin.pythonPath"/);
  assert.match(failureMessage("crashLoop", "botbin lsp", "exit 1"), /keeps exiting/);
  assert.match(notRunningMessage({ kind: "starting" }), /still starting/);
});
