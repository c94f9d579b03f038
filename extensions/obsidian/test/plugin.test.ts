// The bundled plugin loaded into the stub of `obsidian`, with a fake server: settings load and save, vault
// events forwarded once the layout is ready, the search modal flow, the related pane following the cursor,
// Remember selection, and unload stopping the server.
import { strict as assert } from "node:assert";
import { afterEach, beforeEach, test } from "node:test";
import { settle } from "@botbin/client/testing/fakeClock";
import { hit, searchResult, statusResult } from "@botbin/client/testing/payloads";
import type { App as AppType } from "obsidian";
import BotbinPlugin from "../src/main";
import { COMMAND_IDS } from "../src/obsidian/commands";
import { RELATED_VIEW_TYPE, type RelatedView } from "../src/obsidian/relatedView";
import type { BotbinSettingTab } from "../src/obsidian/settingsTab";
import type { BotbinConnection, ConnectionDeps } from "../src/node/connection";
import type { FakeUpdate } from "./stub/codemirrorView";
import { App, type FakeElement, type MarkdownView, Notice, Setting } from "./stub/obsidian";
import { FakeConnection, type Handler } from "./helpers/fakeServer";

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Harness {
  app: App;
  plugin: BotbinPlugin & {
    data: unknown;
    saved: unknown[];
    statusBarItems: FakeElement[];
    editorExtensions: unknown[];
  };
  connections: FakeConnection[];
  deps: ConnectionDeps[];
}

async function load(saved: unknown, handlers: Record<string, Handler> = {}, startError?: string): Promise<Harness> {
  const app = new App("/vault");
  app.vault.add("MEMORY.md");
  app.vault.add("Daily/2026-11-01.md");
  const plugin = new BotbinPlugin(app as unknown as AppType, { id: "botbin" } as never) as Harness["plugin"];
  plugin.data = saved;
  const connections: FakeConnection[] = [];
  const deps: ConnectionDeps[] = [];
  plugin.connectServer = (d, onClosed) => {
    deps.push(d);
    const connection = new FakeConnection(
      { "botbin/status": () => statusResult(), ...handlers },
      onClosed,
      d.progress,
      startError,
    );
    connections.push(connection);
    return connection as unknown as BotbinConnection;
  };
  await (plugin as unknown as { load(): Promise<void> }).load();
  await settle();
  return { app, plugin, connections, deps };
}

function unload(plugin: BotbinPlugin): void {
  (plugin as unknown as { unload(): void }).unload();
}

/** Makes `path` the active note with the cursor at `line`. */
async function activate(app: App, path: string, line: number): Promise<MarkdownView> {
  const leaf = app.workspace.getLeaf();
  await leaf.openFile(app.vault.getFileByPath(path)!);
  const view = leaf.view as MarkdownView;
  view.editor.setCursor({ line, ch: 2 });
  return view;
}

beforeEach(() => {
  Notice.shown = [];
  Notice.all = [];
  Setting.all = [];
});

let loaded: BotbinPlugin | undefined;
afterEach(() => {
  if (loaded) unload(loaded);
  loaded = undefined;
});

test("load: saved settings start `<python> -m botbin lsp` on the vault in vault mode; status bar shows chunks", async () => {
  const { plugin, deps, connections } = await load({ pythonPath: "/venv/bin/python", topK: 5 });
  loaded = plugin;
  assert.deepEqual(deps[0]!.command, { command: "/venv/bin/python", args: ["-m", "botbin", "lsp"] });
  assert.equal(deps[0]!.vaultPath, "/vault");
  assert.deepEqual(deps[0]!.initializationOptions, { vault: true, top_k: 5 });
  assert.equal(connections[0]!.started, true);
  assert.equal(plugin.statusBarItems[0]!.text, "botbin: 46 chunks");
  assert.match(plugin.statusBarItems[0]!.tooltip, /46 chunks indexed/);
});

test("vault events are forwarded once the layout is ready, and stop at unload; unload stops the server", async () => {
  const { app, plugin, connections } = await load(null);
  app.vault.trigger("create", app.vault.add("Loading.md")); // Obsidian's load-time creates: ignored
  app.workspace.finishLayout();
  app.vault.trigger("modify", app.vault.getFileByPath("MEMORY.md"));
  app.vault.trigger("rename", app.vault.add("Archive/Old.md"), "Old.md");
  await wait(150);
  assert.deepEqual(connections[0]!.notifications, [
    { method: "textDocument/didSave", params: { textDocument: { uri: "file:///vault/MEMORY.md" } } },
    {
      method: "workspace/didChangeWatchedFiles",
      params: {
        changes: [
          { uri: "file:///vault/Old.md", type: 3 },
          { uri: "file:///vault/Archive/Old.md", type: 1 },
        ],
      },
    },
  ]);
  unload(plugin);
  await settle();
  assert.equal(connections[0]!.stopped, true);
  assert.equal(app.vault.listenerCount("modify"), 0);
  app.vault.trigger("modify", app.vault.getFileByPath("MEMORY.md"));
  assert.equal(connections[0]!.notifications.length, 2);
});

test("search: the command opens the modal, typing queries botbin/search, choosing opens the note at the hit", async () => {
  const memory = hit({ path: "Daily/2026-11-01.md", startLine: 4, endLine: 8, snippet: "PgBouncer in front" });
  const queries: unknown[] = [];
  const { app, plugin } = await load(
    { searchDebounceMs: 0 },
    {
      "botbin/search": (params) => (queries.push(params), searchResult([memory], { indexing: true })),
    },
  );
  loaded = plugin;
  assert.ok((plugin as unknown as { ribbon: unknown[] }).ribbon.length === 1, "a ribbon icon");
  const modal = plugin.openSearch()!;
  assert.ok(modal);
  const shown = await modal.getSuggestions("database connections");
  assert.deepEqual(queries, [{ query: "database connections" }]);
  (modal as unknown as { shown: unknown[] }).shown = shown;
  const row = (modal as unknown as { rendered(s: unknown): FakeElement }).rendered(shown[0]);
  assert.deepEqual(row.texts, ["Lighthouse › Decisions", "Daily/2026-11-01.md:5 · 0.71", "PgBouncer in front"]);
  assert.ok(
    (modal as unknown as { instructions: { purpose: string }[] }).instructions.some((i) => /indexing/.test(i.purpose)),
  );
  (modal as unknown as { choose(i: number): void }).choose(0);
  await settle();
  const view = app.workspace.activeLeaf!.view as MarkdownView;
  assert.equal(view.file?.path, "Daily/2026-11-01.md");
  assert.deepEqual(view.editor.cursor, { line: 4, ch: 0 });
  assert.deepEqual(view.editor.scrolled, [
    { range: { from: { line: 4, ch: 0 }, to: { line: 7, ch: 0 } }, center: true },
  ]);
  assert.deepEqual(app.workspace.activeLeaf!.openedWith, { active: true, eState: { line: 4 } });
});

test("search while the server cannot start: a Notice with the reason, no modal", async () => {
  const { plugin } = await load(null, {}, "No module named botbin");
  loaded = plugin;
  assert.match(Notice.shown[0]!, /did not start \(python3 -m botbin lsp\): No module named botbin/);
  assert.equal(plugin.openSearch(), undefined);
  assert.match(Notice.shown.at(-1)!, /not running/);
});

test("related pane: follows the active note and cursor line, lists hits, a click opens the memory", async () => {
  const related = hit({ path: "MEMORY.md", startLine: 32, endLine: 36, snippet: "Postgres over SQLite" });
  const asked: unknown[] = [];
  const { app, plugin } = await load(null, {
    "botbin/related": (params) => (asked.push(params), { hits: [related], indexing: false, degraded: false }),
  });
  loaded = plugin;
  app.workspace.finishLayout();
  await plugin.app.workspace.getRightLeaf(false)!.setViewState({ type: RELATED_VIEW_TYPE });
  const view0 = app.workspace.getLeavesOfType(RELATED_VIEW_TYPE)[0]!.view as unknown as RelatedView;
  const pane = { view: view0, contentEl: view0.contentEl as unknown as FakeElement };
  assert.deepEqual(pane.contentEl.texts, ["Open a note to see related memories."]);
  const view = await activate(app, "Daily/2026-11-01.md", 4);
  app.workspace.trigger("file-open", view.file);
  const listener = (plugin.editorExtensions[0] as { listener(u: FakeUpdate): void }).listener;
  view.editor.setCursor({ line: 5, ch: 3 });
  listener({ selectionSet: true, docChanged: false });
  await wait(450);
  await settle();
  assert.deepEqual(asked, [{ uri: "file:///vault/Daily/2026-11-01.md", position: { line: 5, character: 3 } }]);
  assert.ok(pane.contentEl.texts.includes("Postgres over SQLite"), pane.contentEl.texts.join(" | "));
  pane.contentEl.find("botbin-hit")[0]!.click();
  await settle();
  const opened = app.workspace.activeLeaf!.view as MarkdownView;
  assert.equal(opened.file?.path, "MEMORY.md");
  assert.deepEqual(opened.editor.cursor, { line: 32, ch: 0 });
});

test("Remember selection sends the selected text and the settings' tags to botbin/remember", async () => {
  const remembered: unknown[] = [];
  const { app, plugin } = await load(
    { rememberTags: ["inbox"] },
    {
      "botbin/remember": (params) => (
        remembered.push(params),
        { path: "memory/2026-11-29.md", uri: "file:///vault/memory/2026-11-29.md", text: "- 14:05 x #inbox", range: {} }
      ),
    },
  );
  loaded = plugin;
  const view = await activate(app, "MEMORY.md", 0);
  view.editor.selection = "  We picked the otter logo. ";
  const command = (
    plugin as unknown as { commands: Map<string, { editorCallback(e: unknown, v: unknown): void }> }
  ).commands.get(`${COMMAND_IDS.remember}`)!;
  command.editorCallback(view.editor, view);
  await settle();
  assert.deepEqual(remembered, [{ text: "We picked the otter logo.", tags: ["inbox"] }]);
  assert.equal(Notice.shown.at(-1), "botbin: remembered in memory/2026-11-29.md");
  view.editor.selection = "";
  command.editorCallback(view.editor, view);
  await settle();
  assert.equal(remembered.length, 1);
  assert.match(Notice.shown.at(-1)!, /select the text/);
});

test("settings tab: edits are saved when it closes; server keys are sent, a new Python restarts the server", async () => {
  const { plugin, connections, deps } = await load(null);
  loaded = plugin;
  const tab = (plugin as unknown as { settingTabs: BotbinSettingTab[] }).settingTabs[0]!;
  const input = (name: string, value: string): void => {
    const setting = Setting.all.find((s) => s.name === name);
    assert.ok(setting, `a setting named ${name}`);
    setting.components[0]!.input(value);
  };
  tab.display();
  input("Top-k", "3");
  input("Exclude folders", "Archive\nTemplates/");
  input("Alpha", "2"); // out of range: ignored
  assert.equal(plugin.data, null, "nothing is saved while typing");
  tab.hide();
  await settle();
  assert.deepEqual(plugin.settings.exclude, ["Archive/**", "Templates/**"]);
  assert.equal((plugin.data as unknown as { topK: number }).topK, 3);
  assert.equal(plugin.settings.alpha, null);
  assert.deepEqual(connections[0]!.settingsSent, [
    { settings: { botbin: { vault: true, exclude: ["Archive/**", "Templates/**"], top_k: 3 } } },
  ]);
  Setting.all = [];
  tab.display();
  input("Python", "/opt/venv/bin/python");
  tab.hide();
  await settle();
  assert.equal(connections[0]!.stopped, true);
  assert.equal(connections.length, 2);
  assert.equal(deps[1]!.command.command, "/opt/venv/bin/python");
  assert.equal(deps[1]!.initializationOptions.top_k, 3);
});

test("an encrypted vault: the server's error offers a Notice; Unlock sends the passphrase, which is never saved", async () => {
  const MISSING =
    "/vault/memory/aifbin/encryption.json: this store is encrypted; give its passphrase in BOTBIN_PASSPHRASE";
  const WRONG =
    "/vault/memory/aifbin/encryption.json: wrong passphrase for this encrypted store; nothing was read or changed";
  const locked = statusResult();
  locked.folders[0]!.lastError = MISSING;
  locked.folders[0]!.lastErrorKind = "locked";
  const { plugin, connections, deps } = await load(null, { "botbin/status": () => locked });
  // as botbin lsp reports a folder's failure: botbin/error with its kind, then the showMessage it names
  const report = (kind: "locked" | "wrong_passphrase", message: string): void => {
    deps[0]!.onError?.({ uri: "file:///vault", kind, message, shownAs: `botbin: ${message}` });
    deps[0]!.onMessage(1, `botbin: ${message}`);
  };
  loaded = plugin;
  const commands = (plugin as unknown as { commands: Map<string, { name: string; callback(): void }> }).commands;
  assert.equal(commands.get(COMMAND_IDS.unlock)?.name, "Unlock encrypted memory");
  assert.deepEqual(deps[0]!.initializationOptions, { vault: true });
  report("locked", MISSING); // the sync's error, after status said the same
  const offers = () => Notice.all.filter((n) => /to enter its passphrase/.test(n.message));
  assert.equal(offers().length, 1, "one offer, not one per report");
  assert.match(offers()[0]!.message, /^botbin: this vault's memory is encrypted\. Click here \(or run "botbin: Unlock/);
  assert.ok(!Notice.shown.some((m) => m.includes("encryption.json")), "not the server's raw message");
  assert.match(plugin.statusBarItems[0]!.tooltip, /encrypted and it needs its passphrase: run "botbin: Unlock/);

  offers()[0]!.noticeEl.click(); // opens the unlock modal
  const box = Setting.all.find((s) => s.name === "Passphrase")!;
  assert.equal(box.components[0]!.inputEl.type, "password");
  box.components[0]!.input("s3cret");
  box.buttons[0]!.click();
  await settle();
  assert.deepEqual(connections[0]!.settingsSent, [{ settings: { botbin: { vault: true, passphrase: "s3cret" } } }]);

  report("wrong_passphrase", WRONG); // a new try: offered again
  assert.match(offers().at(-1)!.message, /^botbin: wrong passphrase for this vault's encrypted memory/);
  Setting.all = [];
  commands.get(COMMAND_IDS.unlock)!.callback();
  const input = Setting.all.find((s) => s.name === "Passphrase")!.components[0]!;
  input.input("right one");
  input.inputEl.fire("keydown", { key: "Enter", preventDefault: () => undefined });
  await settle();
  assert.deepEqual(connections[0]!.settingsSent.at(-1), {
    settings: { botbin: { vault: true, passphrase: "right one" } },
  });

  await plugin.updateSettings({ ...plugin.settings, topK: 4 }); // a settings change keeps the store open
  assert.deepEqual(connections[0]!.settingsSent.at(-1), {
    settings: { botbin: { vault: true, top_k: 4, passphrase: "right one" } },
  });
  await plugin.session!.restart();
  await settle();
  assert.equal(deps[1]!.initializationOptions.passphrase, "right one", "a restart keeps it for the session");
  assert.ok(!JSON.stringify([plugin.data, plugin.saved]).includes("passphrase"), "never in data.json");
});
