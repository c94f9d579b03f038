// `npm run package` builds a .vsix (esbuild, then vsce): only the bundle and the manifest, and a bundle
// that VS Code can load (checked against the vscode stub).
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { readZip } from "./helpers/zip";
import * as vscodeStub from "./stub/vscode";

const source = JSON.parse(readFileSync("package.json", "utf8"));
const dir = mkdtempSync(join(tmpdir(), "botbin-vsix-"));
const vsix = join(dir, "botbin.vsix");
let entries = new Map<string, Buffer>();

before(() => {
  const run = spawnSync("npm", ["run", "package", "--", "--out", vsix], { encoding: "utf8" });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  entries = readZip(vsix);
});

after(() => rmSync(dir, { recursive: true, force: true }));

test("the .vsix holds the bundle, the manifest and the README, nothing else", () => {
  assert.deepEqual([...entries.keys()].sort(), [
    "[Content_Types].xml",
    "extension.vsixmanifest",
    "extension/dist/extension.js",
    "extension/package.json",
    "extension/readme.md",
  ]);
  const sizeBytes = statSync(vsix).size;
  assert.ok(sizeBytes < 1_000_000, `${sizeBytes} bytes`);
});

test("its manifest names the extension, engine, entry point and contributions", () => {
  const manifest = entries.get("extension.vsixmanifest")!.toString();
  assert.match(
    manifest,
    new RegExp(
      `<Identity [^>]*Id="${source.name}"[^>]*Version="${source.version}"[^>]*Publisher="${source.publisher}"`,
    ),
  );
  assert.match(manifest, new RegExp(`Id="Microsoft.VisualStudio.Code.Engine" Value="\\${source.engines.vscode}"`));
  const packaged = JSON.parse(entries.get("extension/package.json")!.toString());
  assert.equal(packaged.main, "./dist/extension.js");
  assert.deepEqual(packaged.contributes, source.contributes);
  assert.deepEqual(packaged.activationEvents, source.activationEvents);
});

test("the bundle needs nothing but vscode and node's own modules", () => {
  const bundle = entries.get("extension/dist/extension.js")!.toString();
  const required = new Set([...bundle.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1] as string));
  const foreign = [...required].filter(
    (name) => name !== "vscode" && !builtinModules.includes(name.replace(/^node:/, "")),
  );
  assert.deepEqual(foreign, []);
  assert.ok(required.has("vscode"));
});

test("the packaged bundle activates: every command is registered", async () => {
  const file = join(dir, "extension.js");
  writeFileSync(file, entries.get("extension/dist/extension.js")!);
  const Module = require("node:module") as { _load(request: string, ...rest: unknown[]): unknown };
  const load = Module._load;
  Module._load = (request: string, ...rest: unknown[]) => (request === "vscode" ? vscodeStub : load(request, ...rest));
  try {
    vscodeStub.stub.reset();
    vscodeStub.stub.config = { "botbin.server.path": join(dir, "missing-botbin") };
    const extension = createRequire(__filename)(file) as { activate(c: unknown): void; deactivate(): Promise<void> };
    extension.activate({ subscriptions: [], secrets: vscodeStub.stub.secrets });
    const contributed = source.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual([...vscodeStub.stub.commands.keys()].sort(), contributed);
    await extension.deactivate();
  } finally {
    Module._load = load;
  }
});
