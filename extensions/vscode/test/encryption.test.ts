// An encrypted store: the passphrase goes from a password box into secret storage and to the server
// (initializationOptions, didChangeConfiguration), never into a setting or a log line, even with a verbose
// protocol trace; the server's "this store is encrypted" offers "Enter passphrase".
import { strict as assert } from "node:assert";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { configurationChange, initializationOptions, readSettings } from "../src/core/settings";
import { activate, deactivate } from "../src/extension";
import { ServerLog } from "../src/vscode/output";
import { PassphraseStore, passphraseKey } from "../src/vscode/passphrase";
import { FAKE_SERVER } from "./fixtures/fakeServer";
import { FakeSecretStorage, stub, Uri } from "./stub/vscode";

// a quote and a backslash: the trace shows the passphrase JSON-escaped, and that form is hidden too
const SECRET = 'correct "horse" \\ battery';
const WRONG = "not-the-passphrase";
let dir = "";

beforeEach(() => {
  stub.reset();
  dir = mkdtempSync(join(tmpdir(), "botbin-encryption-"));
  stub.workspaceFolders = [{ uri: Uri.file(dir), name: "ws", index: 0 }];
});

afterEach(async () => {
  await deactivate();
  delete process.env.FAKE_PASSPHRASE;
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

const serverSaid = (line: string) => stub.output.filter((l) => l === line).length;
const prompts = () => stub.messages.filter((m) => m.actions.includes("Enter passphrase"));

test("the passphrase joins initializationOptions and didChangeConfiguration, never the settings", () => {
  const { settings } = readSettings((key) => ({ topK: 3 })[key]);
  assert.deepEqual(initializationOptions(settings, SECRET), { top_k: 3, passphrase: SECRET });
  assert.deepEqual(configurationChange(settings, SECRET), { settings: { botbin: { top_k: 3, passphrase: SECRET } } });
  assert.deepEqual(initializationOptions(settings), { top_k: 3 });
  assert.ok(!JSON.stringify(settings).includes("passphrase"));
});

test("the log hides a passphrase as it is and as JSON writes it, in every kind of line", () => {
  const log = new ServerLog();
  log.redact(SECRET);
  log.channel.appendLine(`Params: ${JSON.stringify({ initializationOptions: { passphrase: SECRET } }, null, 4)}`);
  log.channel.append(`server said ${SECRET}\n`);
  log.info(`extension line ${SECRET}`);
  const all = stub.output.join("\n");
  assert.ok(!all.includes(SECRET) && !all.includes(JSON.stringify(SECRET).slice(1, -1)), all);
  assert.match(all, /"passphrase": "••••••"/);
  assert.match(all, /server said ••••••/);
});

test("secret storage: one passphrase per workspace folder", async () => {
  const secrets = new FakeSecretStorage();
  const store = new PassphraseStore(secrets as never);
  await store.store(SECRET);
  assert.equal(await store.get(), SECRET);
  assert.deepEqual([...secrets.values.keys()], [passphraseKey(Uri.file(dir) as never)]);
  assert.equal(await new PassphraseStore(secrets as never, () => passphraseKey(undefined)).get(), undefined);
  await store.delete();
  assert.equal(await store.get(), undefined);
});

test("an encrypted store: Enter passphrase, a wrong one, the right one; kept across restarts; forgotten", async () => {
  const server = join(dir, "botbin");
  writeFileSync(server, FAKE_SERVER);
  chmodSync(server, 0o755);
  process.env.FAKE_RUNS = join(dir, "runs");
  process.env.FAKE_CRASH_FIRST = "0";
  process.env.FAKE_PASSPHRASE = SECRET;
  stub.config = { "botbin.server.path": server, "botbin.trace.server": "verbose" };
  stub.answer = "Enter passphrase";
  stub.inputAnswers = [WRONG, SECRET];
  const context = { subscriptions: [] as { dispose(): unknown }[], secrets: stub.secrets };
  activate(context as never);

  await until("the right passphrase", () => serverSaid("fake: passphrase right"));
  assert.equal(serverSaid("fake: passphrase missing"), 1);
  assert.equal(serverSaid("fake: passphrase wrong"), 1);
  assert.deepEqual(
    prompts().map((m) => [m.severity, m.text]),
    [
      ["error", "botbin: this workspace's memory is encrypted; enter its passphrase to sync and search it."],
      ["error", "botbin: the passphrase of this workspace's encrypted memory is wrong; nothing was read or changed."],
    ],
    "one prompt per try, none for the server's own repeats",
  );
  assert.ok(!stub.messages.some((m) => m.text.includes("encryption.json")), "the server's own pop-up is replaced");
  assert.equal(stub.inputBoxes.length, 2);
  assert.ok(stub.inputBoxes.every((box) => box.password === true && box.ignoreFocusOut === true));
  assert.deepEqual([...stub.secrets.values.entries()], [[passphraseKey(Uri.file(dir) as never), SECRET]]);
  assert.ok(
    stub.output.some((l) => l.includes('"passphrase": "••••••"')),
    "the verbose trace shows the key, hidden",
  );

  // a new window: the passphrase comes from secret storage in initializationOptions; no prompt
  await deactivate();
  for (const d of context.subscriptions.splice(0)) d.dispose();
  activate(context as never);
  await until("the passphrase at initialize", () => serverSaid("fake: passphrase right") === 2);
  await until("running again", () => stub.output.filter((l) => l.endsWith("extension: server running")).length === 2);
  assert.equal(prompts().length, 2);

  // a settings change keeps the store open: the passphrase goes with the new settings
  stub.config["botbin.topK"] = 4;
  stub.configListeners.fire({ affectsConfiguration: (section: string) => section === "botbin" });
  await until("the settings with the passphrase", () => serverSaid("fake: passphrase right") === 3);

  stub.answer = undefined;
  await stub.commands.get("botbin.forgetPassphrase")!();
  assert.equal(stub.secrets.values.size, 0);
  await until("a restart without it", () => serverSaid("fake: passphrase missing") === 2);
  await until("the prompt again", () => prompts().length === 3);
  assert.ok(stub.messages.some((m) => m.severity === "info" && m.text === "botbin: passphrase forgotten."));

  const everything = [...stub.output, ...stub.messages.map((m) => m.text)].join("\n");
  for (const secret of [SECRET, WRONG, JSON.stringify(SECRET).slice(1, -1)]) {
    assert.ok(!everything.includes(secret), `the log shows ${secret}`);
  }
  assert.ok(!JSON.stringify(stub.config).includes("passphrase"), "no setting holds it");
});
