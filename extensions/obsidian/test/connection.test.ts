// BotbinConnection's failed starts, without botbin: the reason reaches the message the user sees.
import { strict as assert } from "node:assert";
import { tmpdir } from "node:os";
import { test } from "node:test";
import { ProgressTracker } from "@botbin/client";
import { type ConnectionDeps, BotbinConnection } from "../src/node/connection";

function deps(command: string, args: string[]): ConnectionDeps {
  return {
    command: { command, args },
    vaultPath: tmpdir(),
    vaultName: "vault",
    initializationOptions: { vault: true },
    progress: new ProgressTracker(() => undefined),
    onMessage: () => undefined,
    log: () => undefined,
  };
}

test("a missing executable: start rejects naming the command line", async () => {
  let closed = 0;
  const connection = new BotbinConnection(deps("/nonexistent/botbin", ["lsp"]), () => closed++);
  await assert.rejects(connection.start(), /cannot run \/nonexistent\/botbin lsp: .*ENOENT/);
  connection.notify("textDocument/didSave", {}); // dropped, not thrown
  await connection.stop();
});

test("a Python without botbin: start rejects with the server's last error line", async () => {
  const script =
    "process.stderr.write('Traceback (most recent call last):\\nModuleNotFoundError: No module named botbin\\n'); process.exit(1)";
  const connection = new BotbinConnection(deps(process.execPath, ["-e", script]), () => undefined);
  await assert.rejects(connection.start(), /^Error: ModuleNotFoundError: No module named botbin$/);
  await connection.stop();
});
