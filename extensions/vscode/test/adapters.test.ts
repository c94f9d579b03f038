// The thin vscode adapters against the stub: QuickPicks, opening hits, the status bar, settings, the log.
import { strict as assert } from "node:assert";
import { beforeEach, test } from "node:test";
import type { SearchResult } from "@botbin/protocol";
import { ThemeColor } from "vscode";
import { readConfig } from "../src/vscode/config";
import { activeInterpreter } from "../src/vscode/interpreter";
import { ServerLog } from "../src/vscode/output";
import { showRelated, showSearch, showStatus } from "../src/vscode/picks";
import { StatusBar } from "../src/vscode/statusBar";
import { settle } from "./helpers/fakeClock";
import { hit, searchResult, statusResult } from "./helpers/hits";
import { stub } from "./stub/vscode";

beforeEach(() => stub.reset());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("Search Memories: a QuickPick that does not filter by label, queries, and opens the hit's range", async () => {
  const queries: string[] = [];
  showSearch(async (query): Promise<SearchResult> => {
    queries.push(query);
    return searchResult([hit({ uri: "file:///ws/memory/2026-11-01.md" })]);
  }, 10);
  const pick = stub.quickPicks[0]!;
  assert.equal(pick.shown, true);
  assert.equal(pick.matchOnDescription, false);
  assert.equal(pick.matchOnDetail, false);
  pick.type("which database");
  await sleep(30);
  assert.deepEqual(queries, ["which database"]);
  assert.equal(pick.items[0]!.alwaysShow, true);
  pick.accept.fire();
  await settle();
  assert.equal(stub.opened.length, 1);
  const { uri, options } = stub.opened[0]!;
  assert.equal(uri.toString(), "file:///ws/memory/2026-11-01.md");
  assert.deepEqual([options.selection.start.line, options.selection.end.line], [32, 36]);
});

test("Show Related Memories: a pick of the hits, or a message when there are none", async () => {
  await showRelated({
    hits: [hit(), hit({ uri: "file:///ws/AGENTS.md" })],
    indexing: false,
    degraded: true,
    hidden: 0,
  });
  assert.equal(stub.offered[0]!.items.length, 2);
  assert.match(stub.offered[0]!.options.title, /related memories \(keyword match only/);
  assert.equal(stub.opened[0]!.uri.toString(), "file:///ws/MEMORY.md");
  await showRelated({ hits: [], indexing: true, degraded: false, hidden: 0 });
  assert.deepEqual(stub.messages.at(-1), {
    severity: "info",
    text: "botbin: no related memories for this paragraph yet (botbin is still indexing).",
    actions: [],
  });
});

test("Show Status: picking a stale note opens it", async () => {
  const status = statusResult({ pending: 1 });
  status.folders[0]!.stale = [{ path: "memory/a.md", reason: "modified" }];
  stub.pickAnswer = (items: readonly { path?: string }[]) => items.find((i) => i.path);
  await showStatus(status);
  assert.equal(stub.opened[0]!.uri.fsPath, "/ws/memory/a.md");
});

test("the status bar item shows the view, with the theme's warning and error colours", () => {
  const bar = new StatusBar();
  const item = stub.statusItems[0]!;
  assert.equal(item.visible, true);
  assert.equal(item.command, "botbin.showStatus");
  bar.render({ text: "$(database) botbin: 46 chunks", tooltip: "t", severity: "ok" });
  assert.equal(item.text, "$(database) botbin: 46 chunks");
  assert.equal(item.backgroundColor, undefined);
  bar.render({ text: "x", tooltip: "t", severity: "warning" });
  assert.deepEqual(item.backgroundColor, new ThemeColor("statusBarItem.warningBackground"));
  bar.render({ text: "x", tooltip: "t", severity: "error" });
  assert.deepEqual(item.backgroundColor, new ThemeColor("statusBarItem.errorBackground"));
  bar.dispose();
  assert.equal(item.visible, false);
});

test("settings come from the botbin section", () => {
  stub.config = { "botbin.pythonPath": "/venv/bin/python", "botbin.topK": 3, "botbin.include": null };
  const { settings } = readConfig();
  assert.equal(settings.pythonPath, "/venv/bin/python");
  assert.deepEqual(settings.server, { top_k: 3 });
});

test("the Python extension's interpreter: newer and older APIs, and none", async () => {
  assert.equal(await activeInterpreter(undefined), undefined);
  const api = { environments: { getActiveEnvironmentPath: () => ({ id: "x", path: "/conda/bin/python" }) } };
  stub.extensions.set("ms-python.python", { isActive: true, exports: api });
  assert.equal(await activeInterpreter(undefined), "/conda/bin/python");
  const old = { settings: { getExecutionDetails: () => ({ execCommand: ["/usr/bin/python3.11"] }) } };
  stub.extensions.set("ms-python.python", { isActive: false, activate: async () => old });
  assert.equal(await activeInterpreter(undefined), "/usr/bin/python3.11");
  stub.extensions.set("ms-python.python", { isActive: false, activate: () => new Promise(() => undefined) });
  assert.equal(
    await activeInterpreter(undefined, 20),
    undefined,
    "an extension that never activates is not waited for",
  );
});

test("the log keeps the server's last error line of this run for messages", () => {
  const log = new ServerLog();
  log.channel.append('Traceback (most recent call last):\n  File "<frozen runpy>"');
  log.channel.append(", line 189\nModuleNotFoundError: No module named botbin\n");
  log.channel.appendLine("[Error - 10:00:00] botbin client: couldn't create connection to server.");
  log.info("server failed: an error of the extension's own");
  assert.equal(log.lastError(), "ModuleNotFoundError: No module named botbin", "only the server's stderr counts");
  assert.ok(stub.output.includes("ModuleNotFoundError: No module named botbin"));
  assert.ok(stub.output.some((l) => l.endsWith("extension: server failed: an error of the extension's own")));
  log.newRun();
  assert.equal(log.lastError(), undefined);
  log.channel.append("botbin: error: unknown command 'lsp'");
  assert.equal(log.lastError(), "botbin: error: unknown command 'lsp'", "a last line without a newline counts");
});

test("nothing is written to the channel once it is closed (no 'Channel has been closed')", () => {
  const log = new ServerLog();
  log.info("before");
  log.dispose();
  log.info("server stopped"); // the session still logs while the server stops after deactivation
  log.channel.append("botbin: INFO the server's last words\n");
  log.channel.appendLine("[Info] client stopped");
  log.channel.dispose();
  log.dispose();
  assert.ok(stub.output.some((l) => l.endsWith("extension: before")));
  assert.ok(!stub.output.some((l) => l.includes("server stopped") || l.includes("last words")));
});
