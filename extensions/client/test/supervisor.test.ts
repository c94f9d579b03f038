import { strict as assert } from "node:assert";
import { test } from "node:test";
import { RestartPolicy } from "../src/restartPolicy";
import { type ServerConnection, type ServerState, Supervisor } from "../src/supervisor";
import { FakeClock, settle } from "../testing/fakeClock";

/** A connection whose start succeeds or fails as told, and whose server can be made to exit. */
class FakeConnection implements ServerConnection {
  stopped = false;
  constructor(
    readonly id: number,
    readonly exit: () => void,
    private readonly fails: boolean,
  ) {}
  async start(): Promise<void> {
    if (this.fails) throw new Error("spawn botbin ENOENT");
  }
  async stop(): Promise<void> {
    this.stopped = true;
  }
}

function harness(outcomes: boolean[] = [], policy = new RestartPolicy()) {
  const clock = new FakeClock();
  const connections: FakeConnection[] = [];
  const states: ServerState[] = [];
  const supervisor = new Supervisor<FakeConnection>(
    async (onClosed) => {
      const connection = new FakeConnection(connections.length, onClosed, outcomes[connections.length] ?? false);
      connections.push(connection);
      return connection;
    },
    policy,
    clock,
    (state) => states.push(state),
  );
  const kinds = () => states.map((s) => (s.kind === "restarting" ? `restarting ${s.delayMs}` : s.kind));
  return { clock, connections, states, supervisor, kinds };
}

test("starts in the background and hands out the running connection", async () => {
  const { supervisor, connections, kinds } = harness();
  supervisor.start();
  assert.equal(supervisor.running, undefined);
  await settle();
  assert.deepEqual(kinds(), ["starting", "running"]);
  assert.equal(supervisor.running, connections[0]);
  supervisor.start(); // already running: nothing happens
  await settle();
  assert.equal(connections.length, 1);
});

test("a server that dies is restarted after a growing wait", async () => {
  const { supervisor, connections, clock, kinds } = harness();
  supervisor.start();
  await settle();
  clock.advance(5000);
  connections[0]!.exit();
  assert.equal(connections[0]!.stopped, true);
  assert.equal(supervisor.running, undefined);
  clock.advance(499);
  await settle();
  assert.equal(connections.length, 1, "waits the whole delay");
  clock.advance(1);
  await settle();
  assert.equal(supervisor.running, connections[1]);
  connections[1]!.exit();
  clock.advance(1000);
  await settle();
  assert.deepEqual(kinds(), [
    "starting",
    "running",
    "restarting 500",
    "starting",
    "running",
    "restarting 1000",
    "starting",
    "running",
  ]);
});

test("a crash loop ends in failed, with no more restarts", async () => {
  const { supervisor, connections, clock, states } = harness([], new RestartPolicy({ maxCrashes: 2 }));
  supervisor.start();
  for (let i = 0; i < 3; i++) {
    await settle();
    connections[i]!.exit();
    clock.advance(60_000 - 1);
  }
  await settle();
  assert.deepEqual(states.at(-1), { kind: "failed", reason: "crashLoop", error: "the server exited" });
  assert.equal(connections.length, 3);
  assert.equal(clock.pending, 0);
});

test("a server that cannot start fails at once with the reason, and is not retried", async () => {
  const { supervisor, connections, clock, states } = harness([true]);
  supervisor.start();
  await settle();
  assert.deepEqual(states.at(-1), { kind: "failed", reason: "startFailed", error: "spawn botbin ENOENT" });
  assert.equal(connections[0]!.stopped, true, "the failed client is disposed");
  clock.advance(600_000);
  await settle();
  assert.equal(connections.length, 1);
});

test("a close reported while starting is left to the failed start", async () => {
  const clock = new FakeClock();
  const states: ServerState[] = [];
  const supervisor = new Supervisor(
    async (onClosed) => ({
      start: async () => {
        onClosed(); // the process died during initialize: the client reports the close, then start rejects
        throw new Error("Pending response rejected since connection got disposed");
      },
      stop: async () => undefined,
    }),
    new RestartPolicy(),
    clock,
    (state) => states.push(state),
  );
  supervisor.start();
  await settle();
  assert.deepEqual(
    states.map((s) => s.kind),
    ["starting", "failed"],
  );
});

test("restart() stops the running server, forgets crashes and starts a new one; late closes are ignored", async () => {
  const { supervisor, connections, clock, kinds } = harness([true]);
  supervisor.start();
  await settle();
  await supervisor.restart(); // e.g. the user fixed botbin.pythonPath
  await settle();
  assert.equal(supervisor.running, connections[1]);
  connections[0]!.exit(); // a stale connection's close must not touch the new one
  assert.equal(supervisor.running, connections[1]);
  await supervisor.restart();
  await settle();
  assert.equal(connections[1]!.stopped, true);
  assert.equal(supervisor.running, connections[2]);
  assert.deepEqual(kinds(), ["starting", "failed", "starting", "running", "starting", "running"]);
  assert.equal(clock.pending, 0);
});

test("stop() during a restart wait cancels it", async () => {
  const { supervisor, connections, clock, kinds } = harness();
  supervisor.start();
  await settle();
  connections[0]!.exit();
  await supervisor.stop();
  clock.advance(60_000);
  await settle();
  assert.equal(connections.length, 1);
  assert.deepEqual(kinds(), ["starting", "running", "restarting 500", "stopped"]);
});
