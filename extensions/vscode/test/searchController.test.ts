import { strict as assert } from "node:assert";
import { test } from "node:test";
import type { Hit, SearchResult } from "@botbin/protocol";
import { SEARCH_TITLE, SearchController } from "../src/core/searchController";
import { FakeClock, settle } from "./helpers/fakeClock";
import { FakePick } from "./helpers/fakePick";
import { hit, searchResult } from "./helpers/hits";

interface Call {
  query: string;
  signal: AbortSignal;
  resolve(result: SearchResult): void;
  reject(error: Error): void;
}

function harness(debounceMs = 200) {
  const clock = new FakeClock();
  const pick = new FakePick();
  const calls: Call[] = [];
  const opened: Hit[] = [];
  const controller = new SearchController(pick, {
    search: (query, signal) =>
      new Promise<SearchResult>((resolve, reject) => calls.push({ query, signal, resolve, reject })),
    open: (h) => opened.push(h),
    clock,
    debounceMs,
  });
  controller.show();
  return { clock, pick, calls, opened, controller };
}

test("typing is debounced: one query, for the last text, after the quiet time", () => {
  const { clock, pick, calls } = harness();
  assert.equal(pick.shown, true);
  assert.equal(pick.title, SEARCH_TITLE);
  pick.type("d");
  clock.advance(100);
  pick.type("da");
  clock.advance(100);
  pick.type("database");
  clock.advance(199);
  assert.equal(calls.length, 0);
  clock.advance(1);
  assert.deepEqual(
    calls.map((c) => c.query),
    ["database"],
  );
  assert.equal(pick.busy, true);
});

test("hits are shown with note, heading path, score and snippet; accepting opens the note", async () => {
  const { clock, pick, calls, opened } = harness();
  pick.type("  which database did we choose ");
  clock.advance(200);
  assert.equal(calls[0]!.query, "which database did we choose");
  const first = hit();
  calls[0]!.resolve(searchResult([first, hit({ path: "memory/2026-11-01.md", score: 0.5 })]));
  await settle();
  assert.equal(pick.busy, false);
  assert.deepEqual(
    pick.items.map((i) => i.description),
    ["MEMORY.md:33 · 0.71", "memory/2026-11-01.md:33 · 0.50"],
  );
  pick.accept.fire();
  assert.deepEqual(opened, [first]);
  assert.equal(pick.shown, false);
  assert.equal(pick.disposed, true);
});

test("an answer to an older query is dropped, and the older request is cancelled", async () => {
  const { clock, pick, calls, controller } = harness();
  pick.type("postgres");
  clock.advance(200);
  pick.type("postgres replicas");
  clock.advance(200);
  assert.equal(calls.length, 2);
  assert.equal(calls[0]!.signal.aborted, true);
  assert.equal(calls[1]!.signal.aborted, false);
  calls[1]!.resolve(searchResult([hit({ snippet: "new" })]));
  await settle();
  calls[0]!.resolve(searchResult([hit({ snippet: "old" })]));
  await settle();
  assert.deepEqual(
    pick.items.map((i) => i.detail),
    ["new"],
  );
  assert.equal(controller.staleDropped, 1);
});

test("a stale answer does not clear the busy spinner of the newer query", async () => {
  const { clock, pick, calls } = harness();
  pick.type("a");
  clock.advance(200);
  pick.type("ab");
  clock.advance(200);
  calls[0]!.reject(new Error("Request cancelled"));
  await settle();
  assert.equal(pick.busy, true);
  assert.deepEqual(pick.items, []);
});

test("clearing the box clears the list and drops the answer in flight", async () => {
  const { clock, pick, calls } = harness();
  pick.type("deploy");
  clock.advance(200);
  pick.type("   ");
  assert.equal(calls[0]!.signal.aborted, true);
  calls[0]!.resolve(searchResult([hit()]));
  await settle();
  assert.deepEqual(pick.items, []);
  assert.equal(pick.busy, false);
  clock.advance(1000);
  assert.equal(calls.length, 1);
});

test("no hits, an error, and a partial index are said in the list and title", async () => {
  const { clock, pick, calls, opened } = harness();
  pick.type("nothing like this");
  clock.advance(200);
  calls[0]!.resolve(searchResult([], { indexing: true }));
  await settle();
  assert.deepEqual(
    pick.items.map((i) => i.label),
    ["$(sync~spin) Indexing… no memories match yet"],
  );
  assert.equal(pick.title, `${SEARCH_TITLE} (indexing: results so far)`);
  pick.accept.fire(); // a message line opens nothing and keeps the pick open
  assert.deepEqual(opened, []);
  assert.equal(pick.shown, true);
  pick.type("boom");
  clock.advance(200);
  calls[1]!.reject(new Error("k must be an integer"));
  await settle();
  assert.equal(pick.items[0]!.label, "$(error) search failed: k must be an integer");
  assert.equal(pick.busy, false);
});

test("hiding the pick cancels the pending query and the one in flight", () => {
  const { clock, pick, calls } = harness();
  pick.type("one");
  clock.advance(200);
  pick.type("two");
  pick.hide();
  assert.equal(calls[0]!.signal.aborted, true);
  clock.advance(1000);
  assert.equal(calls.length, 1);
  assert.equal(pick.disposed, true);
  assert.equal(pick.changeValue.size, 0);
});
