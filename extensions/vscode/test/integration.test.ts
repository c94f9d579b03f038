// The real `botbin lsp` (Python, real model) started from Node the way the extension starts it: the same
// command resolution, initializationOptions, BotbinApi, progress tracking and Search Memories controller,
// over vscode-jsonrpc instead of VS Code's LanguageClient. Skipped when no Python with botbin is found.
import { strict as assert } from "node:assert";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import type { Hit } from "@botbin/protocol";
import {
  createProtocolConnection,
  DidChangeConfigurationNotification,
  DidOpenTextDocumentNotification,
  type Hover,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  type MarkupContent,
  type ProtocolConnection,
  RegistrationRequest,
  ShutdownRequest,
  ExitNotification,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
} from "vscode-languageserver-protocol/node";
import { BotbinApi, ProgressTracker } from "@botbin/client";
import { resolveServerCommand } from "../src/core/serverCommand";
import { SearchController } from "../src/core/searchController";
import { configurationChange, initializationOptions, readSettings } from "../src/core/settings";
import { FakeClock } from "./helpers/fakeClock";
import { FakePick } from "./helpers/fakePick";

const MEMORY = `# Lighthouse

Long-lived knowledge about the Lighthouse uptime monitor.

## Decisions

- **Postgres over SQLite** (2026-09): several server replicas need one shared store, and native
  partitioning keeps old check results cheap to drop. SQLite would have pinned us to a single node.
- **NATS JetStream for the alert queue** (2026-11): durable consumers with explicit acks replace the
  polled outbox table.

## Rules

- Never commit secrets to the repository; they live in .env.local only.
`;

const DAILY = `# 2026-11-01

## Incident

At 03:10 the API ran out of database connections: the connection pool was too small for three replicas
sharing one Postgres server. We raised max_connections and added PgBouncer in front of the database.
The on-call engineer restarted the scheduler after the pool recovered; no check results were lost.

## Chart library

We compared Chart.js and uPlot for the dashboard graphs and picked uPlot, because it draws 100k points
smoothly and its bundle is tiny. Chart.js looked nicer out of the box but stuttered on the uptime history
view with thirty days of one-minute checks. The SvelteKit wrapper around uPlot is ours to maintain.
`;

function repoRoot(): string {
  for (let dir = process.cwd(); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "server", "botbin", "lsp", "protocol.py"))) return dir;
  }
  return process.cwd();
}

const python = [process.env.BOTBIN_PYTHON, join(repoRoot(), ".venv", "bin", "python")].find((p) => p && existsSync(p));

describe(
  "botbin lsp from Node",
  { skip: python ? false : "no Python with botbin (set BOTBIN_PYTHON)", timeout: 150_000 },
  () => {
    let workspace = "";
    let server: ChildProcess;
    let connection: ProtocolConnection;
    let api: BotbinApi;
    let indexed: Promise<void>;
    const stderr: string[] = [];
    const progressSeen: string[] = [];
    const memoryUri = () => pathToFileURL(join(workspace, "MEMORY.md")).href;
    const dailyUri = () => pathToFileURL(join(workspace, "memory", "2026-11-01.md")).href;

    before(async () => {
      workspace = mkdtempSync(join(tmpdir(), "botbin-lsp-"));
      mkdirSync(join(workspace, "memory"));
      writeFileSync(join(workspace, "MEMORY.md"), MEMORY);
      writeFileSync(join(workspace, "memory", "2026-11-01.md"), DAILY);
      const { settings } = readSettings((key) => ({ pythonPath: python, topK: 5 })[key]);
      const command = resolveServerCommand({ ...settings, platform: process.platform });
      assert.deepEqual(command.args, ["-m", "botbin", "lsp"]);
      server = spawn(command.command, command.args, { cwd: workspace, stdio: ["pipe", "pipe", "pipe"] });
      server.stderr?.on("data", (data: Buffer) => stderr.push(data.toString()));
      connection = createProtocolConnection(
        new StreamMessageReader(server.stdout!),
        new StreamMessageWriter(server.stdin!),
      );
      let done: () => void = () => undefined;
      indexed = new Promise((resolve) => (done = resolve));
      const tracker = new ProgressTracker(
        (p) => p.message && progressSeen.push(p.message),
        () => done(),
      );
      connection.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
        connection.onProgress(WorkDoneProgress.type, token, (value) => tracker.update(token, value));
      });
      connection.onRequest(RegistrationRequest.type, () => undefined);
      connection.listen();
      api = new BotbinApi(connection);
      await connection.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri: pathToFileURL(workspace).href,
        workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: "ws" }],
        capabilities: {
          window: { workDoneProgress: true },
          workspace: { workspaceFolders: true, didChangeWatchedFiles: { dynamicRegistration: true } },
          textDocument: { hover: { contentFormat: ["markdown", "plaintext"] }, synchronization: { didSave: true } },
        },
        initializationOptions: initializationOptions(settings),
      });
      await connection.sendNotification(InitializedNotification.type, {});
    });

    after(async () => {
      if (connection) {
        await connection.sendRequest(ShutdownRequest.type).catch(() => undefined);
        await connection.sendNotification(ExitNotification.type).catch(() => undefined);
      }
      if (server && server.exitCode === null) {
        await new Promise((resolve) => {
          const timer = setTimeout(() => (server.kill(), resolve(undefined)), 5000);
          server.once("exit", () => (clearTimeout(timer), resolve(undefined)));
        });
      }
      connection?.dispose();
      rmSync(workspace, { recursive: true, force: true });
    });

    test("indexes the workspace with $/progress and reports status", async () => {
      await indexed;
      assert.ok(
        progressSeen.some((m) => /\d+\/\d+ chunks/.test(m)),
        `progress: ${progressSeen.join(" | ")}`,
      );
      const status = await api.status();
      assert.equal(status.files, 2, stderr.join(""));
      assert.ok(status.chunks >= 2);
      assert.equal(status.degraded, false, "the real model loads");
      assert.equal(status.indexing, false);
    });

    test("botbin/search ranks the database decision first, with range and heading path", async () => {
      const result = await api.search({ query: "why Postgres rather than SQLite for the shared store" });
      const top = result.hits[0]!;
      assert.equal(top.path, "MEMORY.md");
      assert.equal(top.uri, memoryUri());
      assert.deepEqual(top.headingPath, ["Lighthouse", "Decisions"]);
      assert.match(top.snippet, /Postgres/);
      assert.equal(top.range.start.line, top.startLine);
      assert.ok(result.hits.length <= 5, "top_k from initializationOptions");
    });

    test("Search Memories (the QuickPick controller) against the server: type, wait, open", async () => {
      const clock = new FakeClock();
      const pick = new FakePick();
      const opened: Hit[] = [];
      const controller = new SearchController(pick, {
        search: (query, signal) => api.search({ query }, signal),
        open: (hit) => opened.push(hit),
        clock,
        debounceMs: 200,
      });
      controller.show();
      pick.type("charting library for the dashboard");
      clock.advance(200);
      for (let i = 0; i < 200 && pick.busy; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(pick.busy, false);
      pick.accept.fire();
      assert.equal(opened[0]?.uri, dailyUri());
      assert.deepEqual(opened[0]?.headingPath.at(-1), "Chart library");
    });

    test("hover on an open note lists related memories from other notes", async () => {
      await connection.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri: dailyUri(), languageId: "markdown", version: 1, text: DAILY },
      });
      const hover = (await connection.sendRequest(HoverRequest.type, {
        textDocument: { uri: dailyUri() },
        position: { line: 4, character: 10 },
      })) as Hover | null;
      assert.ok(hover, "a hover on the incident paragraph");
      const markdown = (hover.contents as MarkupContent).value;
      assert.match(markdown, /Related memories/);
      assert.ok(markdown.includes(`${memoryUri()}#L`), markdown);
    });

    test("botbin/related for the cursor's paragraph", async () => {
      const result = await api.related({ uri: dailyUri(), position: { line: 4, character: 0 } });
      assert.ok(
        result.hits.some((h) => h.path === "MEMORY.md"),
        JSON.stringify(result.hits.map((h) => h.path)),
      );
      assert.ok(
        result.hits.every((h) => !(h.path === "memory/2026-11-01.md" && h.startLine === 4)),
        "never the paragraph itself",
      );
    });

    test("botbin.sync through workspace/executeCommand, then new settings through didChangeConfiguration", async () => {
      writeFileSync(
        join(workspace, "memory", "2026-11-02.md"),
        "# 2026-11-02\n\nWe moved the staging cluster to Hetzner.\n",
      );
      const synced = await api.sync("sync");
      assert.equal(synced.done, true);
      assert.deepEqual(synced.folders[0]?.added, ["memory/2026-11-02.md"]);
      const { settings } = readSettings((key) => ({ topK: 1 })[key]);
      await connection.sendNotification(DidChangeConfigurationNotification.type, configurationChange(settings));
      const result = await api.search({ query: "staging cluster" });
      assert.equal(result.hits.length, 1);
      assert.equal(result.hits[0]?.path, "memory/2026-11-02.md");
    });
  },
);
