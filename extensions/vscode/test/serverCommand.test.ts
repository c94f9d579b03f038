import { strict as assert } from "node:assert";
import { test } from "node:test";
import { describeCommand, expandPath, resolveServerCommand } from "../src/core/serverCommand";

const base = { serverPath: "", pythonPath: "", platform: "linux" as const };

test("botbin.server.path wins and runs `<path> lsp`", () => {
  const command = resolveServerCommand({
    ...base,
    serverPath: "/opt/botbin",
    pythonPath: "/py",
    activeInterpreter: "/x",
  });
  assert.deepEqual(command, { command: "/opt/botbin", args: ["lsp"], source: "botbin.server.path" });
});

test("then botbin.pythonPath, then the Python extension's interpreter, each as `-m botbin lsp`", () => {
  assert.deepEqual(resolveServerCommand({ ...base, pythonPath: "/venv/bin/python", activeInterpreter: "/x" }), {
    command: "/venv/bin/python",
    args: ["-m", "botbin", "lsp"],
    source: "botbin.pythonPath",
  });
  assert.deepEqual(resolveServerCommand({ ...base, activeInterpreter: "/conda/bin/python" }), {
    command: "/conda/bin/python",
    args: ["-m", "botbin", "lsp"],
    source: "Python extension",
  });
});

test("with nothing set: python3 (python on Windows)", () => {
  assert.equal(resolveServerCommand(base).command, "python3");
  assert.equal(resolveServerCommand(base).source, "default");
  assert.equal(resolveServerCommand({ ...base, platform: "win32" }).command, "python");
});

test("~, ${userHome} and ${workspaceFolder} are expanded", () => {
  const where = { home: "/home/ada", workspaceFolder: "/ws/notes" };
  assert.equal(expandPath("~/bin/botbin", where), "/home/ada/bin/botbin");
  assert.equal(expandPath("${userHome}/bin/botbin", where), "/home/ada/bin/botbin");
  assert.equal(expandPath("${workspaceFolder}/.venv/bin/python", where), "/ws/notes/.venv/bin/python");
  assert.equal(expandPath("~ada/bin", where), "~ada/bin");
  assert.equal(expandPath("${workspaceFolder}/x", {}), "${workspaceFolder}/x");
  const command = resolveServerCommand({ ...base, pythonPath: "${workspaceFolder}/.venv/bin/python", ...where });
  assert.equal(command.command, "/ws/notes/.venv/bin/python");
});

test("the command line is shown as a person would type it", () => {
  assert.equal(describeCommand(resolveServerCommand(base)), "python3 -m botbin lsp");
  assert.equal(
    describeCommand({ command: "/My Tools/botbin", args: ["lsp"], source: "default" }),
    '"/My Tools/botbin" lsp',
  );
});
