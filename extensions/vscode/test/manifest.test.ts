// package.json against the code: contributed commands and settings are the ones the code uses.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { COMMANDS } from "@botbin/protocol";
import { COMMAND_IDS } from "../src/core/commandIds";
import { SETTING_KEYS } from "../src/core/settings";

const manifest = JSON.parse(readFileSync("package.json", "utf8"));

test("the palette commands are contributed as `Botbin: ...` and activate the extension", () => {
  const commands: { command: string; title: string; category: string }[] = manifest.contributes.commands;
  assert.deepEqual(commands.map((c) => c.command).sort(), Object.values(COMMAND_IDS).sort());
  const titles = commands.map((c) => `${c.category}: ${c.title}`);
  const expected = ["Search Memories", "Sync Now", "Reindex", "Show Status", "Show Related Memories"];
  for (const title of [...expected, "Set Passphrase for Encrypted Memory", "Forget Passphrase"]) {
    assert.ok(titles.includes(`Botbin: ${title}`), title);
  }
  for (const id of Object.values(COMMAND_IDS)) assert.ok(manifest.activationEvents.includes(`onCommand:${id}`), id);
  assert.ok(manifest.activationEvents.includes("onLanguage:markdown"));
});

test("no palette command takes the id of a server command (the language client registers those)", () => {
  for (const id of Object.values(COMMAND_IDS)) assert.ok(!(COMMANDS as readonly string[]).includes(id), id);
});

test("every setting the code reads is contributed with a description, and nothing else", () => {
  const properties: Record<string, { description?: string; markdownDescription?: string }> =
    manifest.contributes.configuration.properties;
  const expected = [...SETTING_KEYS.map((k) => `botbin.${k}`), "botbin.trace.server"].sort();
  assert.deepEqual(Object.keys(properties).sort(), expected);
  for (const [key, property] of Object.entries(properties)) {
    assert.ok((property.description ?? property.markdownDescription ?? "").length > 20, `${key} needs a description`);
  }
});

test("the engine, the vscode types and the entry point agree", () => {
  assert.equal(manifest.main, "./dist/extension.js");
  assert.match(manifest.engines.vscode, /^\^1\.\d+\.0$/);
  assert.equal(manifest.devDependencies["@types/vscode"], manifest.engines.vscode.slice(1));
});
