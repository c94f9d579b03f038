// @botbin/protocol against server/botbin/lsp/protocol.py: the same constant names with the same values.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
// names.ts only: what generated.ts exports (HOST_PROTOCOL) is generated from Python, so it cannot drift.
import * as protocol from "../src/names";

type Wire = Record<string, string | string[]>;

function repoRoot(): string {
  for (let dir = process.cwd(); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "server", "botbin", "lsp", "protocol.py"))) return dir;
  }
  throw new Error(`no server/botbin/lsp/protocol.py above ${process.cwd()}`);
}

const ROOT = repoRoot();
const PROTOCOL_PY = join(ROOT, "server", "botbin", "lsp", "protocol.py");

/** Upper-case exports of the TypeScript module, tuples as arrays. */
function typescriptNames(): Wire {
  const names: Wire = {};
  for (const [name, value] of Object.entries(protocol)) {
    if (/^[A-Z][A-Z0-9_]*$/.test(name)) names[name] = Array.isArray(value) ? [...value] : String(value);
  }
  return names;
}

/** Constants of protocol.py read from its source: `NAME = "value"` and `NAME = (A, B)`. */
function parsedPythonNames(): Wire {
  const names: Wire = {};
  for (const line of readFileSync(PROTOCOL_PY, "utf8").split("\n")) {
    const match = /^([A-Z][A-Z0-9_]*)\s*=\s*(.+?)\s*$/.exec(line);
    if (!match) continue;
    const [, name, value] = match as unknown as [string, string, string];
    const literal = /^"([^"]*)"$/.exec(value);
    if (literal) {
      names[name] = literal[1] ?? "";
      continue;
    }
    const tuple = /^\(([A-Z0-9_,\s]*)\)$/.exec(value);
    assert.ok(tuple, `protocol.py: cannot read ${name} = ${value}`);
    names[name] = (tuple[1] ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .map((ref) => {
        const resolved = names[ref];
        assert.equal(typeof resolved, "string", `protocol.py: ${name} refers to unknown ${ref}`);
        return resolved as string;
      });
  }
  return names;
}

function python(): string | undefined {
  const candidates = [process.env.BOTBIN_PYTHON, join(ROOT, ".venv", "bin", "python")];
  return candidates.find((p): p is string => !!p && existsSync(p));
}

const DUMP = `
import json, botbin.lsp.protocol as p
print(json.dumps({k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(p).items()
                  if k.isupper() and isinstance(v, (str, tuple))}))
`;

test("protocol.py, as read from its source, and @botbin/protocol have the same constants", () => {
  const parsed = parsedPythonNames();
  assert.ok(Object.keys(parsed).length >= 12, "protocol.py lost its constants?");
  assert.deepEqual(typescriptNames(), parsed);
});

test("botbin.lsp.protocol, as Python imports it, and @botbin/protocol have the same constants", (t) => {
  const interpreter = python();
  if (!interpreter) {
    t.skip("no Python with botbin (set BOTBIN_PYTHON or run scripts/setup.sh)");
    return;
  }
  const run = spawnSync(interpreter, ["-c", DUMP], {
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: join(ROOT, "server") },
  });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(typescriptNames(), JSON.parse(run.stdout));
});

test("custom requests and commands are namespaced and distinct", () => {
  for (const method of protocol.CUSTOM_REQUESTS) assert.match(method, /^botbin\/[a-z]+$/);
  for (const command of protocol.COMMANDS) assert.match(command, /^botbin\.[a-z]+$/);
  const all = [...protocol.CUSTOM_REQUESTS, ...protocol.COMMANDS];
  assert.equal(new Set(all).size, all.length);
});
