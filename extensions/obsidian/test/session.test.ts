// The session without Obsidian: start, failure Notice, restart with backoff after a crash, vault events
// to the running server, status bar, and dispose stopping the server.
import { strict as assert } from "node:assert";
import { test } from "node:test";
import { FakeClock, settle } from "@botbin/client/testing/fakeClock";
import { statusResult } from "@botbin/client/testing/payloads";
import { PROGRESS_TITLE } from "@botbin/protocol";
import { uriMaker } from "../src/core/places";
import { AFTER_SYNC_MS, Session } from "../src/core/session";
import type { StatusView } from "../src/core/statusModel";
import { DID_SAVE } from "../src/core/vaultSync";
import { FakeConnection } from "./helpers/fakeServer";

function harness(startErrors: (string | undefined)[] = []) {
  const clock = new FakeClock();
  const connections: FakeConnection[] = [];
  const views: StatusView[] = [];
  const notices: string[] = [];
  let statusCalls = 0;
  const session = new Session<FakeConnection>({
    connect: async (onClosed, progress) => {
      const connection = new FakeConnection(
        { "botbin/status": () => (statusCalls++, statusResult()) },
        onClosed,
        progress,
        startErrors[connections.length],
      );
      connections.push(connection);
      return connection;
    },
    commandLine: () => "python3 -m botbin lsp",
    uriOf: uriMaker("/vault"),
    clock,
    render: (view) => views.push(view),
    notice: (message) => notices.push(message),
  });
  return { clock, connections, views, notices, session, statusCalls: () => statusCalls };
}

test("session: starts the server, shows its status, forwards vault events, stops on dispose", async () => {
  const { clock, connections, views, session, statusCalls } = harness();
  assert.equal(views.at(-1)?.text, "botbin: off");
  session.start();
  await settle();
  assert.equal(session.state.kind, "running");
  assert.equal(views.at(-1)?.text, "botbin: 46 chunks");
  const server = connections[0]!;
  session.vault.modified("Daily/2026-11-29.md");
  assert.deepEqual(server.notifications, [
    { method: DID_SAVE, params: { textDocument: { uri: "file:///vault/Daily/2026-11-29.md" } } },
  ]);
  const before = statusCalls();
  clock.advance(AFTER_SYNC_MS);
  await settle();
  assert.equal(statusCalls(), before + 1, "status is asked again after the sync");
  session.vault.created("new.md"); // gathered, then sent before the server stops
  await session.dispose();
  assert.equal(server.notifications.at(-1)?.method, "workspace/didChangeWatchedFiles");
  assert.equal(server.stopped, true);
  assert.equal(session.state.kind, "stopped");
});

test("session: indexing progress shows in the status bar", async () => {
  const { connections, views, session } = harness();
  session.start();
  await settle();
  const progress = connections[0]!.progress!;
  progress.update("t", { kind: "begin", title: PROGRESS_TITLE, message: "vault", percentage: 0 });
  progress.update("t", { kind: "report", message: "120/324 chunks", percentage: 37 });
  assert.equal(views.at(-1)?.text, "botbin: indexing 37% (120/324 chunks)…");
  assert.match(views.at(-1)!.tooltip, /vault: 120\/324 chunks/);
  progress.update("t", { kind: "end" });
  await settle();
  assert.equal(views.at(-1)?.text, "botbin: 46 chunks");
  assert.match(views.at(-1)!.tooltip, /last sync: just now/, "the sync that just ended, even one that changed nothing");
});

test("session: a server that cannot start is named in one Notice, with the reason", async () => {
  const { connections, notices, session, views } = harness(["No module named botbin"]);
  session.start();
  await settle();
  assert.equal(connections[0]!.stopped, true);
  assert.equal(session.state.kind, "failed");
  assert.equal(notices.length, 1);
  assert.match(notices[0]!, /did not start \(python3 -m botbin lsp\): No module named botbin/);
  assert.equal(views.at(-1)?.text, "botbin: not running");
  assert.equal(session.requireApi(), undefined);
  assert.match(notices[1]!, /not running: No module named botbin/);
});

test("session: a server that dies is restarted with backoff; new settings restart or are sent", async () => {
  const { clock, connections, session } = harness();
  session.start();
  await settle();
  connections[0]!.crash();
  assert.deepEqual(session.state, { kind: "restarting", delayMs: 500, attempt: 1 });
  clock.advance(499);
  await settle();
  assert.equal(connections.length, 1);
  clock.advance(1);
  await settle();
  assert.equal(connections.length, 2);
  assert.equal(session.state.kind, "running");
  connections[1]!.crash();
  assert.deepEqual(session.state, { kind: "restarting", delayMs: 1000, attempt: 2 });
  clock.advance(1000);
  await settle();
  const change = { settings: { botbin: { vault: true, top_k: 3 } } };
  await session.settingsChanged({ command: false, server: change });
  assert.deepEqual(connections[2]!.settingsSent, [change]);
  await session.settingsChanged({ command: true, server: undefined });
  await settle();
  assert.equal(connections[2]!.stopped, true);
  assert.equal(connections.length, 4);
  await session.dispose();
});

test("session: a passphrase goes to the running server, or starts a server that failed again", async () => {
  const change = { settings: { botbin: { vault: true, passphrase: "s3cret" } } };
  const running = harness();
  running.session.start();
  await settle();
  await running.session.unlocked(change);
  assert.deepEqual(running.connections[0]!.settingsSent, [change]);
  await running.session.dispose();

  const failed = harness(["No module named botbin"]);
  failed.session.start();
  await settle();
  assert.equal(failed.session.state.kind, "failed");
  await failed.session.unlocked(change);
  await settle();
  assert.equal(failed.connections.length, 2, "started again (its initializationOptions carry the passphrase)");
  assert.equal(failed.session.state.kind, "running");
  await failed.session.dispose();
});
