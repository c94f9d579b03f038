// The plugin's client against the real `botbin lsp` on a vault whose botbin.toml says `encryption = true`:
// without a passphrase the sync's error surfaces (and is recognised as needing one); Unlock's
// didChangeConfiguration opens the store and search finds the note; a wrong passphrase is refused; the
// passphrase is in no file of the vault. Skipped when no Python with botbin is found.
import { strict as assert } from "node:assert";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { lockedReason, needsPassphrase, ProgressTracker, wrongPassphrase } from "@botbin/client";
import type { ErrorReport, StatusResult } from "@botbin/protocol";
import { configurationChange, DEFAULT_SETTINGS, initializationOptions, serverCommand } from "../src/core/settings";
import { BotbinConnection } from "../src/node/connection";

// fast Argon2id: the test is about the plumbing, not the key's cost
const BOTBIN_TOML = "encryption = true\nkdf_time_cost = 1\nkdf_memory_kib = 8192\nkdf_parallelism = 1\n";
const NOTE = "# Lighthouse\n\n## Decisions\n\n- **Postgres over SQLite**: several replicas need one shared store.\n";
const PASSPHRASE = "otter-lantern-97";

function repoRoot(): string {
  for (let dir = process.cwd(); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "server", "botbin", "lsp", "protocol.py"))) return dir;
  }
  return process.cwd();
}

const python = [process.env.BOTBIN_PYTHON, join(repoRoot(), ".venv", "bin", "python")].find((p) => p && existsSync(p));

async function poll<T>(what: string, probe: () => Promise<T | undefined>, limitMs = 30_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - start > limitMs) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe(
  "an encrypted vault against botbin lsp",
  { skip: python ? false : "no Python with botbin (set BOTBIN_PYTHON)", timeout: 180_000 },
  () => {
    let vault = "";
    let connection: BotbinConnection;
    const messages: string[] = [];
    const errors: ErrorReport[] = [];
    const settings = { ...DEFAULT_SETTINGS, pythonPath: python ?? "" };
    const search = () => connection.api.search({ query: "why Postgres rather than SQLite", k: 5 });
    /** Status once no sync runs and the last one set (or cleared) the error `done` looks for. */
    const settled = (done: (s: StatusResult) => boolean) =>
      poll("a settled status", async () => {
        const status = await connection.api.status();
        return !status.indexing && status.pending === 0 && done(status) ? status : undefined;
      });

    before(async () => {
      vault = mkdtempSync(join(tmpdir(), "botbin-encrypted-"));
      mkdirSync(join(vault, "Projects"));
      writeFileSync(join(vault, "botbin.toml"), BOTBIN_TOML);
      writeFileSync(join(vault, "Projects", "Lighthouse.md"), NOTE);
      connection = new BotbinConnection(
        {
          command: serverCommand(settings, process.platform),
          vaultPath: vault,
          vaultName: "vault",
          initializationOptions: initializationOptions(settings),
          progress: new ProgressTracker(
            () => undefined,
            () => undefined,
          ),
          onMessage: (_type, message) => messages.push(message),
          onError: (report) => errors.push(report),
          log: () => undefined,
        },
        () => undefined,
      );
      await connection.start();
    });

    after(async () => {
      await connection?.stop();
      rmSync(vault, { recursive: true, force: true });
    });

    test("without a passphrase the sync fails with the kind locked, and search finds nothing", async () => {
      const error = await poll("the error", async () => errors.find((e) => needsPassphrase(e.kind)));
      assert.equal(error.kind, "locked");
      assert.match(error.message, /encryption\.json: encryption is on for this store/);
      await poll("its message", async () => messages.find((m) => m === error.shownAs));
      const status = await connection.api.status();
      assert.ok(lockedReason(status), JSON.stringify(status.folders));
      assert.equal(status.files, 0);
      assert.deepEqual((await search()).hits, []);
    });

    test("unlocking through didChangeConfiguration opens the store: the note is found", async () => {
      connection.sendSettings(configurationChange(settings, PASSPHRASE));
      const status = await settled((s) => s.files === 1 && !lockedReason(s));
      assert.equal(status.folders[0]?.encryption, "on", JSON.stringify(status.folders));
      assert.equal((await search()).hits[0]?.path, "Projects/Lighthouse.md");
      const stored = files(vault);
      assert.ok(
        stored.some((f) => f.endsWith(join("memory", "aifbin", "encryption.json"))),
        stored.join("\n"),
      );
      for (const file of stored) assert.ok(!readFileSync(file).includes(PASSPHRASE), `${file} holds the passphrase`);
    });

    test("a wrong passphrase is refused with its own message; nothing is found until the right one", async () => {
      connection.sendSettings(configurationChange(settings, "not-the-passphrase"));
      const status = await settled((s) => !!lockedReason(s));
      assert.ok(wrongPassphrase(lockedReason(status)?.kind), JSON.stringify(status.folders));
      await poll("the error", async () => errors.find((e) => wrongPassphrase(e.kind)));
      assert.deepEqual((await search()).hits, []);
      connection.sendSettings(configurationChange(settings, PASSPHRASE));
      await settled((s) => s.files === 1 && !lockedReason(s));
      assert.equal((await search()).hits[0]?.path, "Projects/Lighthouse.md");
    });
  },
);
