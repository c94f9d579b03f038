// The extension as VS Code runs it (activate, the real vscode-languageclient, the supervisor) against the
// vscode stub: commands, status bar, a server that cannot start, one that crashes and is restarted.
import { strict as assert } from "node:assert";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { activate, deactivate } from "../src/extension";
import { FAKE_SERVER } from "./fixtures/fakeServer";
import { CancellationTokenSource, Position, stub, Uri, window } from "./stub/vscode";

const manifest = JSON.parse(readFileSync("package.json", "utf8"));
let dir = "";

beforeEach(() => {
  stub.reset();
  dir = mkdtempSync(join(tmpdir(), "botbin-activation-"));
  stub.workspaceFolders = [{ uri: Uri.file(dir), name: "ws", index: 0 }];
});

afterEach(async () => {
  await deactivate();
  rmSync(dir, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output:\n${stub.output.join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const context = () => ({ subscriptions: [] as { dispose(): unknown }[], secrets: stub.secrets });
const statusText = () => stub.statusItems[0]?.text;

test("activate registers every contributed command and a server that cannot start says what to set", async () => {
  stub.config = { "botbin.server.path": join(dir, "no-such-botbin") };
  stub.answer = "Open settings";
  activate(context() as never);
  const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual([...stub.commands.keys()].sort(), contributed);
  const error = await until("the error message", () => stub.messages.find((m) => m.severity === "error"));
  assert.match(error.text, /the language server did not start \(.*no-such-botbin lsp\)/);
  assert.match(error.text, /cannot run .*no-such-botbin lsp: spawn .*no-such-botbin ENOENT/);
  assert.deepEqual(error.actions, ["Open settings", "Show log", "Restart"]);
  await until("settings opened", () => stub.executed.find((e) => e.command === "workbench.action.openSettings"));
  assert.equal(statusText(), "$(error) botbin");
  assert.equal(stub.messages.filter((m) => m.severity === "error").length, 1, "the client adds no pop-up of its own");
  await stub.commands.get("botbin.searchMemories")!();
  assert.equal(stub.messages.filter((m) => m.severity === "error").length, 2, "a command says again why");
});

test("a Python without botbin: the message quotes the interpreter's own error", async () => {
  const python = join(dir, "python");
  // like a real Python, it is still alive when the client writes `initialize` (had it died before, the
  // write would fail inside vscode-jsonrpc 8.2.0 as an unhandled rejection: its bug, not ours)
  writeFileSync(python, '#!/bin/sh\necho "$0: No module named botbin" >&2\nsleep 0.3\nexit 1\n');
  chmodSync(python, 0o755);
  stub.config = { "botbin.pythonPath": python };
  activate(context() as never);
  const error = await until("the error message", () => stub.messages.find((m) => m.severity === "error"));
  assert.equal(
    error.text,
    `botbin: the language server did not start (${python} -m botbin lsp): ${python}: No module named botbin. ` +
      `Set "botbin.server.path" to the botbin executable, or "botbin.pythonPath" to a Python with botbin installed.`,
  );
});

test("a server that exits after starting is restarted; progress and status reach the status bar", async () => {
  const server = join(dir, "botbin");
  writeFileSync(server, FAKE_SERVER);
  chmodSync(server, 0o755);
  process.env.FAKE_RUNS = join(dir, "runs");
  process.env.FAKE_CRASH_FIRST = "1";
  stub.config = { "botbin.server.path": server };
  activate(context() as never);
  await until("a restart", () => statusText() === "$(debug-restart) botbin");
  assert.match(stub.statusItems[0]!.tooltip ?? "", /restarting in 500 ms \(attempt 1\)/);
  assert.equal(stub.statusItems[0]!.backgroundColor?.id, "statusBarItem.warningBackground");
  await until("indexing progress", () => statusText() === "$(sync~spin) botbin 50%");
  await until("status after indexing", () => statusText() === "$(database) botbin: 5 chunks");
  assert.equal(readFileSync(process.env.FAKE_RUNS, "utf8"), "2");
  assert.equal(stub.messages.length, 0, "a restart that works bothers nobody");
  assert.ok(
    stub.output.some((line) => line.includes("fake botbin lsp, run 2")),
    "the server's stderr is in the log",
  );
});

test("hover comes from the server, and botbin.hover.enabled = false drops it in the client", async () => {
  const server = join(dir, "botbin");
  writeFileSync(server, FAKE_SERVER);
  chmodSync(server, 0o755);
  process.env.FAKE_RUNS = join(dir, "runs");
  process.env.FAKE_CRASH_FIRST = "0";
  stub.config = { "botbin.server.path": server };
  activate(context() as never);
  const { selector, provider } = await until("a hover provider", () => stub.hoverProviders[0]);
  const [filter] = selector as { scheme: string; language: string }[];
  assert.deepEqual([filter?.scheme, filter?.language], ["file", "markdown"]);
  const document = { uri: Uri.file(join(dir, "MEMORY.md")), languageId: "markdown", version: 1 };
  const token = new CancellationTokenSource().token;
  const hover = (await provider.provideHover(document, new Position(3, 4), token)) as { contents: { value: string }[] };
  assert.equal(hover.contents[0]?.value, "**Related memories**");
  stub.config["botbin.hover.enabled"] = false;
  stub.configListeners.fire({ affectsConfiguration: (section: string) => section === "botbin" });
  assert.equal(await provider.provideHover(document, new Position(7, 0), token), undefined);
  await until("the log", () => stub.output.some((l) => l.includes("hover at line 3")));
  assert.ok(!stub.output.some((l) => l.includes("hover at line 7")), "no request reached the server");
});

test("the palette commands reach the server and show what it answered", async () => {
  const server = join(dir, "botbin");
  writeFileSync(server, FAKE_SERVER);
  chmodSync(server, 0o755);
  process.env.FAKE_RUNS = join(dir, "runs");
  process.env.FAKE_CRASH_FIRST = "0";
  stub.config = { "botbin.server.path": server, "botbin.search.debounceMs": 0 };
  activate(context() as never);
  await until("status after indexing", () => statusText() === "$(database) botbin: 5 chunks");
  const run = (id: string) => stub.commands.get(id)!();

  await run("botbin.syncNow");
  assert.deepEqual(stub.messages.at(-1), {
    severity: "info",
    text: "botbin: synced (1 added, 0 modified, 0 deleted, 1 unchanged)",
    actions: [],
  });
  await run("botbin.reindexNotes");
  assert.ok(stub.output.some((l) => l === "fake: command botbin.sync undefined"));
  assert.ok(stub.output.some((l) => l === "fake: command botbin.reindex undefined"));

  await run("botbin.searchMemories");
  const pick = stub.quickPicks[0]!;
  pick.type("database");
  await until("search hits", () => pick.items[0]?.hit);
  pick.accept.fire();
  await until("the note opened", () => stub.opened[0]);
  assert.equal(stub.opened[0]!.uri.toString(), "file:///ws/MEMORY.md");

  stub.pickAnswer = () => undefined;
  await run("botbin.showStatus");
  assert.equal(stub.offered.at(-1)!.items[0].label, "$(database) 2 notes, 5 chunks");

  const document = { uri: Uri.file(join(dir, "MEMORY.md")), languageId: "markdown" };
  window.activeTextEditor = { document, selection: { active: new Position(7, 3) } };
  await run("botbin.showRelatedMemories");
  window.activeTextEditor = undefined;
  assert.ok(stub.output.some((l) => l.includes('"position":{"line":7,"character":3}')));
  assert.match(stub.offered.at(-1)!.options.title, /related memories/);
});
