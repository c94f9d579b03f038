// The search modal's feed (debounce, stale answers dropped) and the related pane's tracker, with a fake clock.
import { strict as assert } from "node:assert";
import { test } from "node:test";
import { FakeClock, settle } from "@botbin/client/testing/fakeClock";
import { hit, searchResult } from "@botbin/client/testing/payloads";
import type { RelatedResult, SearchResult } from "@botbin/protocol";
import { type CursorPlace, type RelatedState, RelatedTracker } from "../src/core/relatedTracker";
import { SearchFeed, type Suggestion } from "../src/core/searchFeed";

interface Call<P, R> {
  params: P;
  signal: AbortSignal;
  resolve(result: R): void;
  reject(error: Error): void;
}

function deferred<P, R>(calls: Call<P, R>[]) {
  return (params: P, signal: AbortSignal) =>
    new Promise<R>((resolve, reject) => calls.push({ params, signal, resolve, reject }));
}

function feed() {
  const clock = new FakeClock();
  const calls: Call<string, SearchResult>[] = [];
  return { clock, calls, feed: new SearchFeed({ search: deferred(calls), clock, debounceMs: 200 }) };
}

const texts = (suggestions: Suggestion[]): string[] =>
  suggestions.map((s) => (s.kind === "hit" ? s.hit.snippet : `(${s.text})`));

test("search feed: keystrokes are debounced into one query for the last text; older asks keep the list", async () => {
  const { clock, calls, feed: f } = feed();
  const first = f.suggest("d");
  clock.advance(100);
  const second = f.suggest("da");
  assert.deepEqual(await first, [], "superseded: answered at once with what is shown");
  clock.advance(100);
  const last = f.suggest("  database ");
  clock.advance(199);
  assert.equal(calls.length, 0);
  clock.advance(1);
  assert.deepEqual(await second, []);
  assert.deepEqual(
    calls.map((c) => c.params),
    ["database"],
  );
  calls[0]!.resolve(searchResult([hit({ snippet: "Postgres" })]));
  assert.deepEqual(texts(await last), ["Postgres"]);
});

test("search feed: an answer to an older query is dropped and its request cancelled", async () => {
  const { clock, calls, feed: f } = feed();
  const older = f.suggest("postgres");
  clock.advance(200);
  const newer = f.suggest("postgres replicas");
  clock.advance(200);
  assert.equal(calls[0]!.signal.aborted, true);
  calls[1]!.resolve(searchResult([hit({ snippet: "new" })]));
  assert.deepEqual(texts(await newer), ["new"]);
  calls[0]!.resolve(searchResult([hit({ snippet: "old" })]));
  assert.deepEqual(texts(await older), ["new"], "the late answer shows the newer list, not its own");
  assert.equal(f.staleDropped, 1);
});

test("search feed: empty box, no hits, indexing, degraded and errors", async () => {
  const { clock, calls, feed: f } = feed();
  assert.deepEqual(await f.suggest("   "), []);
  assert.equal(calls.length, 0);
  const none = f.suggest("nothing");
  clock.advance(200);
  calls[0]!.resolve(searchResult([], { indexing: true }));
  assert.deepEqual(texts(await none), ["(No memories match yet (still indexing))"]);
  assert.equal(f.caveat, "indexing: results so far");
  const failed = f.suggest("boom");
  clock.advance(200);
  calls[1]!.reject(new Error("k must be an integer"));
  assert.deepEqual(texts(await failed), ["(Search failed: k must be an integer)"]);
  const keywords = f.suggest("ok");
  clock.advance(200);
  calls[2]!.resolve(searchResult([hit()], { degraded: true }));
  await keywords;
  assert.equal(f.caveat, "keyword match only: the model is unavailable");
});

test("search feed: dispose cancels the wait and the request in flight", async () => {
  const { clock, calls, feed: f } = feed();
  const inflight = f.suggest("one");
  clock.advance(200);
  const waiting = f.suggest("two");
  f.dispose();
  assert.equal(calls[0]!.signal.aborted, true);
  assert.deepEqual(await waiting, []);
  clock.advance(1000);
  assert.equal(calls.length, 1);
  calls[0]!.reject(new Error("cancelled"));
  assert.deepEqual(await inflight, []);
});

function tracker() {
  const clock = new FakeClock();
  const calls: Call<CursorPlace, RelatedResult>[] = [];
  const states: RelatedState[] = [];
  const t = new RelatedTracker({ related: deferred(calls), render: (s) => states.push(s), clock, restMs: 400 });
  return { clock, calls, states, tracker: t };
}

const at = (line: number, character = 0, path = "Daily/2026-11-01.md"): CursorPlace => ({
  path,
  uri: `file:///vault/${path}`,
  position: { line, character },
});

test("related pane: asks once the cursor rests, for the note and line under it", async () => {
  const { clock, calls, states, tracker: t } = tracker();
  t.moved(at(3, 1));
  clock.advance(200);
  t.moved(at(4, 7)); // typing or moving on: wait again
  clock.advance(399);
  assert.equal(calls.length, 0);
  clock.advance(1);
  assert.deepEqual(calls[0]!.params, at(4, 7));
  assert.equal(states.at(-1)?.kind, "loading");
  calls[0]!.resolve({ hits: [hit()], indexing: false, degraded: false, hidden: 0 });
  await settle();
  assert.deepEqual(t.state, { kind: "hits", path: "Daily/2026-11-01.md", hits: [hit()], caveat: undefined });
  t.moved(at(4, 9)); // same line: the same paragraph, no new request
  clock.advance(1000);
  assert.equal(calls.length, 1);
  t.refresh(); // the note was saved
  clock.advance(400);
  assert.equal(calls.length, 2);
  assert.equal(states.at(-1)?.kind, "hits", "keeps the list while it asks again");
});

test("related pane: answers for a place the cursor left are dropped", async () => {
  const { clock, calls, tracker: t } = tracker();
  t.moved(at(1));
  clock.advance(400);
  t.moved(at(10));
  clock.advance(400);
  assert.equal(calls[0]!.signal.aborted, true);
  calls[1]!.resolve({ hits: [], indexing: true, degraded: false, hidden: 0 });
  calls[0]!.resolve({ hits: [hit()], indexing: false, degraded: false, hidden: 0 });
  await settle();
  assert.deepEqual(t.state, { kind: "empty", path: "Daily/2026-11-01.md", indexing: true });
});

test("related pane: no note, and errors", async () => {
  const { clock, calls, states, tracker: t } = tracker();
  t.moved(at(1));
  clock.advance(400);
  t.moved(undefined);
  assert.equal(calls[0]!.signal.aborted, true);
  assert.deepEqual(states.at(-1), { kind: "noNote" });
  t.moved(at(2));
  clock.advance(400);
  calls[1]!.reject(new Error("the language server is not running"));
  await settle();
  assert.deepEqual(t.state, {
    kind: "error",
    path: "Daily/2026-11-01.md",
    message: "the language server is not running",
  });
  t.moved(at(2)); // after an error the same place is asked again
  clock.advance(400);
  assert.equal(calls.length, 3);
});

test("related pane: nothing is asked while no pane is open; opening one asks", () => {
  const clock = new FakeClock();
  const calls: Call<CursorPlace, RelatedResult>[] = [];
  let visible = false;
  const t = new RelatedTracker({
    related: deferred(calls),
    render: () => undefined,
    clock,
    restMs: 400,
    visible: () => visible,
  });
  t.moved(at(3));
  clock.advance(400);
  assert.equal(calls.length, 0);
  visible = true;
  t.refresh();
  clock.advance(400);
  assert.deepEqual(calls[0]?.params, at(3));
});
