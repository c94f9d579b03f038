// The plugin's pure logic, without Obsidian: settings, vault event forwarding, hit text, status bar text.
import { strict as assert } from "node:assert";
import type { MigrationStatus } from "@botbin/protocol";
import { test } from "node:test";
import { FakeClock } from "@botbin/client/testing/fakeClock";
import { hit, statusResult } from "@botbin/client/testing/payloads";
import { hitText } from "../src/core/hitText";
import { hitRange, uriMaker } from "../src/core/places";
import {
  commandChanged,
  configurationChange,
  DEFAULT_SETTINGS,
  describeCommand,
  initializationOptions,
  loadSettings,
  parseGlobs,
  parseOptionalNumber,
  parseTags,
  serverCommand,
  serverSettingsChanged,
} from "../src/core/settings";
import { failureMessage, statusView } from "../src/core/statusModel";
import { DID_CHANGE_WATCHED_FILES, DID_SAVE, FileChange, isNote, VaultSync } from "../src/core/vaultSync";

test("settings: defaults on first run, bad saved values fall back and are named", () => {
  assert.deepEqual(loadSettings(null), { settings: DEFAULT_SETTINGS, problems: [] });
  const { settings, problems } = loadSettings({
    pythonPath: " /venv/bin/python ",
    include: ["Notes/**"],
    alpha: 1.5,
    topK: "ten",
    exclude: "Archive",
    stray: true,
  });
  assert.equal(settings.pythonPath, "/venv/bin/python");
  assert.deepEqual(settings.include, ["Notes/**"]);
  assert.equal(settings.alpha, null);
  assert.equal(settings.topK, null);
  assert.deepEqual(settings.exclude, []);
  assert.equal("stray" in settings, false);
  assert.deepEqual(problems, [
    "exclude must be a list of globs; using the default",
    "alpha must be 0-1; using the default",
    "topK must be 1-1000; using the default",
  ]);
});

test("settings: text boxes parse folders as globs, tags without #, numbers or unset", () => {
  assert.deepEqual(parseGlobs("Projects\n./Daily/, Inbox/*.md\n\n Areas/Work.md"), [
    "Projects/**",
    "Daily/**",
    "Inbox/*.md",
    "Areas/Work.md",
  ]);
  assert.deepEqual(parseTags("#inbox, idea  #later"), ["inbox", "idea", "later"]);
  assert.equal(parseOptionalNumber(" "), null);
  assert.equal(parseOptionalNumber("0.5"), 0.5);
  assert.equal(parseOptionalNumber("x"), undefined);
});

test("settings: vault mode unless include folders are set, plus only the keys the user set", () => {
  assert.deepEqual(initializationOptions(DEFAULT_SETTINGS), { vault: true });
  const custom = { ...DEFAULT_SETTINGS, include: ["Notes/**"], exclude: ["Archive/**"], alpha: 0.5, topK: 7 };
  assert.deepEqual(initializationOptions(custom), {
    vault: false, // vault mode would ignore include; memory/ stays tracked for Remember selection
    include: ["Notes/**", "memory/**"],
    exclude: ["Archive/**"],
    alpha: 0.5,
    top_k: 7,
  });
  assert.deepEqual(configurationChange(custom).settings.botbin.top_k, 7);
  assert.equal(serverSettingsChanged(DEFAULT_SETTINGS, custom), true);
  assert.equal(commandChanged(DEFAULT_SETTINGS, custom), false);
  assert.equal(commandChanged(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, pythonPath: "py" }), true);
  assert.equal(serverSettingsChanged(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, rememberTags: ["x"] }), false);
});

test("settings: the server command is the executable, else the Python, else python3", () => {
  assert.deepEqual(
    serverCommand({ ...DEFAULT_SETTINGS, serverPath: "~/bin/botbin", pythonPath: "py" }, "linux", "/home/u"),
    {
      command: "/home/u/bin/botbin",
      args: ["lsp"],
    },
  );
  assert.deepEqual(serverCommand({ ...DEFAULT_SETTINGS, pythonPath: "/opt/py 3/python" }, "linux"), {
    command: "/opt/py 3/python",
    args: ["-m", "botbin", "lsp"],
  });
  assert.equal(serverCommand(DEFAULT_SETTINGS, "win32").command, "python");
  assert.equal(
    describeCommand(serverCommand({ ...DEFAULT_SETTINGS, pythonPath: "/opt/py 3/python" }, "linux")),
    '"/opt/py 3/python" -m botbin lsp',
  );
});

function vaultSync() {
  const clock = new FakeClock();
  const sent: { method: string; params: unknown }[] = [];
  const sync = new VaultSync({
    notify: (method, params) => sent.push({ method, params }),
    uriOf: uriMaker("/vault"),
    clock,
  });
  return { clock, sent, sync };
}

test("vault events: a modified note is didSave'd at once", () => {
  const { sent, sync } = vaultSync();
  sync.modified("Projects/Plan B.md");
  assert.deepEqual(sent, [
    { method: DID_SAVE, params: { textDocument: { uri: "file:///vault/Projects/Plan%20B.md" } } },
  ]);
});

test("vault events: creates, deletes and renames are batched into one didChangeWatchedFiles", () => {
  const { clock, sent, sync } = vaultSync();
  sync.created("a.md");
  sync.deleted("b.md");
  sync.renamed("Archive/c.md", "c.md");
  clock.advance(99);
  assert.equal(sent.length, 0);
  clock.advance(1);
  assert.deepEqual(sent, [
    {
      method: DID_CHANGE_WATCHED_FILES,
      params: {
        changes: [
          { uri: "file:///vault/a.md", type: FileChange.created },
          { uri: "file:///vault/b.md", type: FileChange.deleted },
          { uri: "file:///vault/c.md", type: FileChange.deleted },
          { uri: "file:///vault/Archive/c.md", type: FileChange.created },
        ],
      },
    },
  ]);
});

test("vault events: deleted then created again in one batch is a change", () => {
  const { sent, sync } = vaultSync();
  sync.deleted("a.md");
  sync.created("a.md");
  sync.flush();
  assert.deepEqual((sent[0]?.params as { changes: unknown[] }).changes, [
    { uri: "file:///vault/a.md", type: FileChange.changed },
  ]);
});

test("vault events: only markdown notes outside .obsidian/ and .trash/ are sent", () => {
  assert.equal(isNote("Daily/2026-11-29.md"), true);
  assert.equal(isNote("Notes/README.MD"), true);
  assert.equal(isNote("image.png"), false);
  assert.equal(isNote(".obsidian/snippets/x.md"), false);
  assert.equal(isNote(".trash/old.md"), false);
  const { clock, sent, sync } = vaultSync();
  sync.modified(".obsidian/workspace.md");
  sync.created(".trash/old.md");
  sync.renamed("pic.png", "pic2.png");
  sync.renamed(".trash/x.md", "x.md"); // moved to Obsidian's trash: a delete
  clock.advance(1000);
  assert.deepEqual(sent, [
    {
      method: DID_CHANGE_WATCHED_FILES,
      params: { changes: [{ uri: "file:///vault/x.md", type: FileChange.deleted }] },
    },
  ]);
});

test("hits read as heading path, note:line · score and a one-line snippet; open at the hit's lines", () => {
  assert.deepEqual(hitText(hit()), {
    title: "Lighthouse › Decisions",
    location: "MEMORY.md:33 · 0.71",
    snippet: "Postgres over SQLite (2026-09): several server replicas need one shared …",
  });
  assert.equal(hitText(hit({ headingPath: [] })).title, "MEMORY");
  assert.deepEqual(hitRange(hit()), { from: { line: 32, ch: 0 }, to: { line: 35, ch: 0 } });
});

test("status bar: a model migration's progress in the tooltip, a stopped one as a problem", () => {
  const progress = { active: false };
  const moving: MigrationStatus = {
    phase: "embedding",
    toModel: "/models/bge-small",
    fromModel: "sentence-transformers/all-MiniLM-L6-v2",
    notesDone: 40,
    notesTotal: 173,
    chunksEmbedded: 400,
    chunksToEmbed: 1735,
    message: "",
    startedAt: "2026-12-03T10:00:00Z",
    updatedAt: "2026-12-03T10:01:00Z",
  };
  const withMigration = (migration: MigrationStatus | null) => {
    const status = statusResult();
    return statusResult({ folders: status.folders.map((f) => ({ ...f, migration })) });
  };
  const embedding = statusView({ server: { kind: "running" }, progress, status: withMigration(moving) });
  assert.deepEqual([embedding.text, embedding.severity], ["botbin: 46 chunks", "ok"]);
  assert.match(
    embedding.tooltip,
    /moving to model \/models\/bge-small: 40\/173 notes re-embedded \(sentence-transformers/,
  );
  const paused = statusView({
    server: { kind: "running" },
    progress,
    status: withMigration({ ...moving, phase: "paused" }),
  });
  assert.match(paused.tooltip, /paused at 40\/173 notes \(the next sync resumes it\)/);
  const refused = withMigration({ ...moving, phase: "refused", toModel: "/nope", message: "no model in /nope" });
  const warned = statusView({ server: { kind: "running" }, progress, status: refused });
  assert.equal(warned.severity, "warning");
  assert.match(warned.tooltip, /⚠ the model setting \/nope is not used: no model in \/nope/);
  const none = statusView({ server: { kind: "running" }, progress, status: withMigration(null) });
  assert.doesNotMatch(none.tooltip, /model \//);
});

test("status bar: server states, indexing progress, chunks, degraded and stale", () => {
  const progress = { active: false };
  assert.equal(statusView({ server: { kind: "starting" }, progress }).text, "botbin: starting…");
  const failed = statusView({
    server: { kind: "failed", reason: "startFailed", error: "No module named botbin" },
    progress,
  });
  assert.equal(failed.severity, "error");
  assert.match(failed.tooltip, /No module named botbin/);
  assert.equal(
    statusView({ server: { kind: "running" }, progress: { active: true, percentage: 40, message: "3/8 notes" } }).text,
    "botbin: indexing 40%…",
  );
  const indexing = { active: true, percentage: 13, message: "vault: 120/900 chunks" };
  const first = statusView({ server: { kind: "running" }, progress: indexing, status: statusResult({ pending: 173 }) });
  assert.deepEqual([first.text, first.severity], ["botbin: indexing 13% (120/900 chunks)…", "ok"]);
  assert.doesNotMatch(first.tooltip, /changed since the last sync/, "no stale warning while the first sync runs");
  const ok = statusView({ server: { kind: "running" }, progress, status: statusResult() });
  assert.deepEqual([ok.text, ok.severity], ["botbin: 46 chunks", "ok"]);
  const degraded = statusView({
    server: { kind: "running" },
    progress,
    status: statusResult({ degraded: true, pending: 2 }),
  });
  assert.equal(degraded.text, "⚠ botbin: 46 chunks (keywords only) · 2 stale");
  assert.match(degraded.tooltip, /keyword search only/);
  assert.match(degraded.tooltip, /run "botbin: Sync now"/);
  assert.match(
    failureMessage("startFailed", "python3 -m botbin lsp", "No module named botbin"),
    /did not start \(python3 -m botbin lsp\): No module named botbin/,
  );
});
