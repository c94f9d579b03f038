// @botbin/protocol's names (generated from server/botbin/lsp/protocol.py by scripts/gen_protocol.py, whose --check
// tests/test_generated.py runs): what the clients rely on of them.
import { strict as assert } from "node:assert";
import { test } from "node:test";
import * as protocol from "../src/index";

test("custom requests and commands are namespaced and distinct", () => {
  for (const method of protocol.CUSTOM_REQUESTS) assert.match(method, /^botbin\/[a-z]+$/);
  for (const command of protocol.COMMANDS) assert.match(command, /^botbin\.[a-z]+$/);
  const all = [...protocol.CUSTOM_REQUESTS, ...protocol.COMMANDS];
  assert.equal(new Set(all).size, all.length);
});

test("each editor setting has a description, and bounds where it is a number", () => {
  for (const [key, setting] of Object.entries(protocol.EDITOR_SETTINGS)) {
    assert.ok(setting.description.length > 10, key);
    if (setting.type === "number" || setting.type === "integer") assert.ok("minimum" in setting, key);
  }
  assert.equal(protocol.EDITOR_SETTINGS.top_k.maximum, protocol.MAX_K);
});
