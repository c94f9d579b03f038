// The plugin's own client code against the real `botbin lsp` (Python, real model) on a temporary vault:
// BotbinConnection (spawn, initialize in vault mode, $/progress), the Session's VaultSync, the search
// feed, the related tracker and Remember. Skipped when no Python with botbin is found.
import { strict as assert } from "node:assert";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type BotbinApi, ProgressTracker, systemClock } from "@botbin/client";
import { FakeClock, settle } from "@botbin/client/testing/fakeClock";
import type { SearchResult } from "@botbin/protocol";
import { uriMaker } from "../src/core/places";
import { type RelatedState, RelatedTracker } from "../src/core/relatedTracker";
import { SearchFeed } from "../src/core/searchFeed";
import {
  configurationChange,
  DEFAULT_SETTINGS,
  initializationOptions,
  parseGlobs,
  serverCommand,
} from "../src/core/settings";
import { VaultSync } from "../src/core/vaultSync";
import { BotbinConnection } from "../src/node/connection";

const PROJECT = `# Lighthouse

## Decisions

- **Postgres over SQLite** (2026-09): several server replicas need one shared store, and native
  partitioning keeps old check results cheap to drop. SQLite would have pinned us to a single node.
`;

const DAILY = `# 2026-11-01

## Incident

At 03:10 the API ran out of database connections: the connection pool was too small for three replicas
sharing one Postgres server. We raised max_connections and added PgBouncer in front of the database.

## Chart library

We compared Chart.js and uPlot for the dashboard graphs and picked uPlot, because it draws 100k points
smoothly and its bundle is tiny.
`;

function repoRoot(): string {
  for (let dir = process.cwd(); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "server", "botbin", "lsp", "protocol.py"))) return dir;
  }
  return process.cwd();
}

const python = [process.env.BOTBIN_PYTHON, join(repoRoot(), ".venv", "bin", "python")].find((p) => p && existsSync(p));

/** Polls `search` until `found` holds; returns the milliseconds it took. */
async function until(
  api: BotbinApi,
  query: string,
  found: (r: SearchResult) => boolean,
  limitMs = 20_000,
): Promise<number> {
  const start = Date.now();
  for (;;) {
    const result = await api.search({ query, k: 5 });
    if (found(result)) return Date.now() - start;
    if (Date.now() - start > limitMs)
      assert.fail(`not found in ${limitMs} ms: ${JSON.stringify(result.hits.map((h) => h.path))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe(
  "the plugin's client against botbin lsp",
  { skip: python ? false : "no Python with botbin (set BOTBIN_PYTHON)", timeout: 180_000 },
  () => {
    let vault = "";
    let connection: BotbinConnection;
    let sync: VaultSync;
    let indexed: Promise<void>;
    const progressSeen: string[] = [];
    const messages: string[] = [];
    let exited = false;

    before(async () => {
      vault = mkdtempSync(join(tmpdir(), "botbin-vault-"));
      mkdirSync(join(vault, "Projects"));
      mkdirSync(join(vault, "Daily"));
      mkdirSync(join(vault, ".obsidian"));
      mkdirSync(join(vault, ".trash"));
      writeFileSync(join(vault, "Projects", "Lighthouse.md"), PROJECT);
      writeFileSync(join(vault, "Daily", "2026-11-01.md"), DAILY);
      writeFileSync(join(vault, ".obsidian", "notes.md"), "# Settings\n\nPostgres replicas PgBouncer uPlot.\n");
      writeFileSync(join(vault, ".trash", "old.md"), "# Old\n\nPostgres replicas PgBouncer uPlot.\n");
      let done: () => void = () => undefined;
      indexed = new Promise((resolve) => (done = resolve));
      const progress = new ProgressTracker(
        (p) => p.message && progressSeen.push(p.message),
        () => done(),
      );
      const settings = { ...DEFAULT_SETTINGS, pythonPath: python!, topK: 5 };
      connection = new BotbinConnection(
        {
          command: serverCommand(settings, process.platform),
          vaultPath: vault,
          vaultName: "vault",
          initializationOptions: initializationOptions(settings),
          progress,
          onMessage: (_type, message) => messages.push(message),
          log: () => undefined,
        },
        () => (exited = true),
      );
      await connection.start();
      sync = new VaultSync({
        notify: (m, p) => connection.notify(m, p),
        uriOf: uriMaker(vault),
        clock: systemClock,
        batchMs: 20,
      });
    });

    after(async () => {
      sync?.dispose();
      await connection?.stop();
      rmSync(vault, { recursive: true, force: true });
    });

    test("indexes the vault in vault mode with $/progress, leaving out .obsidian/ and .trash/", async () => {
      await indexed;
      assert.ok(
        progressSeen.some((m) => /\d+\/\d+ chunks/.test(m)),
        `progress: ${progressSeen.join(" | ")}`,
      );
      const status = await connection.api.status();
      assert.equal(status.files, 2, JSON.stringify(status.folders));
      assert.equal(status.indexing, false);
      assert.equal(status.degraded, false, "the real model loads");
      assert.deepEqual(messages, []);
    });

    test("search through the modal's feed finds the note by meaning", async () => {
      const clock = new FakeClock();
      const feed = new SearchFeed({
        search: (q, signal) => connection.api.search({ query: q }, signal),
        clock,
        debounceMs: 200,
      });
      const answer = feed.suggest("why Postgres rather than SQLite for the shared store");
      clock.advance(200);
      const suggestions = await answer;
      const top = suggestions[0];
      assert.equal(top?.kind, "hit");
      assert.equal(top.kind === "hit" && top.hit.path, "Projects/Lighthouse.md");
      assert.ok(suggestions.length <= 5, "top_k from the settings");
    });

    test("a saved note is searchable within a second: modify -> didSave; create, rename, delete -> didChangeWatchedFiles", async () => {
      writeFileSync(
        join(vault, "Daily", "2026-11-01.md"),
        `${DAILY}\n## Staging\n\nWe moved the staging cluster to Hetzner in Falkenstein.\n`,
      );
      sync.modified("Daily/2026-11-01.md");
      const savedMs = await until(connection.api, "staging cluster Hetzner Falkenstein", (r) =>
        r.hits.some((h) => h.path === "Daily/2026-11-01.md" && /Hetzner/.test(h.snippet)),
      );
      assert.ok(savedMs < 1000, `searchable after ${savedMs} ms`);

      writeFileSync(join(vault, "Projects", "Otter.md"), "# Otter\n\nWe picked the otter logo for the status page.\n");
      sync.created("Projects/Otter.md");
      await until(connection.api, "otter logo status page", (r) => r.hits[0]?.path === "Projects/Otter.md");

      mkdirSync(join(vault, "Archive"));
      writeFileSync(join(vault, "Archive", "Otter.md"), readFileSync(join(vault, "Projects", "Otter.md")));
      rmSync(join(vault, "Projects", "Otter.md"));
      sync.renamed("Archive/Otter.md", "Projects/Otter.md");
      await until(
        connection.api,
        "otter logo status page",
        (r) => r.hits.some((h) => h.path === "Archive/Otter.md") && r.hits.every((h) => h.path !== "Projects/Otter.md"),
      );

      rmSync(join(vault, "Archive", "Otter.md"));
      sync.deleted("Archive/Otter.md");
      await until(connection.api, "otter logo status page", (r) => r.hits.every((h) => h.path !== "Archive/Otter.md"));
    });

    test("related memories for the cursor's paragraph, never the paragraph itself", async () => {
      const clock = new FakeClock();
      const states: RelatedState[] = [];
      const tracker = new RelatedTracker({
        related: (place, signal) => connection.api.related({ uri: place.uri, position: place.position }, signal),
        render: (s) => states.push(s),
        clock,
        restMs: 400,
      });
      const uri = uriMaker(vault)("Daily/2026-11-01.md");
      tracker.moved({ path: "Daily/2026-11-01.md", uri, position: { line: 4, character: 10 } });
      clock.advance(400);
      for (let i = 0; i < 200 && tracker.state.kind === "loading"; i++) await new Promise((r) => setTimeout(r, 50));
      await settle();
      const state = tracker.state;
      assert.equal(state.kind, "hits", JSON.stringify(state));
      const hits = state.kind === "hits" ? state.hits : [];
      assert.ok(
        hits.some((h) => h.path === "Projects/Lighthouse.md"),
        JSON.stringify(hits.map((h) => h.path)),
      );
      assert.ok(hits.every((h) => !(h.path === "Daily/2026-11-01.md" && h.startLine <= 4 && h.endLine > 4)));
    });

    test("Remember appends to today's memory/YYYY-MM-DD.md and it is searchable at once", async () => {
      const result = await connection.api.remember({ text: "The on-call rota moves to Tuesdays.", tags: ["decision"] });
      assert.match(result.path, /^memory\/\d{4}-\d{2}-\d{2}\.md$/);
      const written = readFileSync(join(vault, ...result.path.split("/")), "utf8");
      assert.match(written, /- \d{2}:\d{2} The on-call rota moves to Tuesdays\. #decision/);
      await until(connection.api, "on-call rota Tuesdays", (r) => r.hits[0]?.path === result.path, 5000);
    });

    test("include folders from the settings tab: only those folders (and memory/) stay indexed", async () => {
      const settings = { ...DEFAULT_SETTINGS, include: parseGlobs("Projects") };
      connection.sendSettings(configurationChange(settings));
      const start = Date.now();
      let status = await connection.api.status();
      while ((status.files !== 2 || status.indexing) && Date.now() - start < 20_000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = await connection.api.status();
      }
      assert.equal(status.files, 2, "Projects/Lighthouse.md and today's memory note");
      const result = await connection.api.search({ query: "uPlot chart library dashboard", k: 10 });
      assert.ok(result.hits.every((h) => h.path.startsWith("Projects/") || h.path.startsWith("memory/")));
    });

    test("stop shuts the server down without a crash report", async () => {
      await connection.stop();
      assert.equal(exited, false, "a requested stop is not a crash");
    });
  },
);
