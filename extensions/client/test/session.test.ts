// The session every front end shares: status asked at start, every minute while running and soon after a change;
// the status view in the front end's look; an encrypted store's passphrase offered once per try; dispose stops.
import { strict as assert } from "node:assert";
import { test } from "node:test";
import type { StatusResult } from "@botbin/protocol";
import { BotbinApi } from "../src/api";
import { AFTER_CHANGE_MS, ClientSession, type SessionConnection, STATUS_POLL_MS } from "../src/session";
import type { StatusView } from "../src/status";
import type { StatusLook } from "../src/statusView";
import { FakeClock, settle } from "../testing/fakeClock";
import { statusResult } from "../testing/payloads";

const LOOK: StatusLook = {
  icons: { stopped: "", starting: "", restarting: "", failed: "", indexing: "", ok: "[ok] ", warning: "[!] " },
  words: {
    stopped: " off",
    starting: " starting",
    restarting: " restarting",
    failed: " failed",
    indexing: " indexing",
  },
  busy: "",
  failedHint: "",
  syncCommand: "Sync",
  unlockCommand: "Unlock",
};

class Connection implements SessionConnection {
  readonly api: BotbinApi;
  stopped = false;
  constructor(status: () => StatusResult) {
    this.api = new BotbinApi({ sendRequest: async <R>() => status() as R });
  }
  async start(): Promise<void> {}
  async stop(): Promise<void> {
    this.stopped = true;
  }
}

function harness(status: () => StatusResult = () => statusResult()) {
  const clock = new FakeClock();
  const views: StatusView[] = [];
  const offers: string[] = [];
  let asked = 0;
  const connections: Connection[] = [];
  const session = new ClientSession<Connection>({
    connect: async () => {
      connections.push(new Connection(() => (asked++, status())));
      return connections.at(-1)!;
    },
    clock,
    look: LOOK,
    render: (view) => views.push(view),
    onFailed: () => undefined,
    offerPassphrase: (error) => offers.push(error.kind),
  });
  return { clock, views, offers, session, connections, asked: () => asked };
}

test("status is asked at start, every minute while running, and once soon after a burst of changes", async () => {
  const { clock, views, session, asked } = harness();
  assert.equal(views.at(-1)?.text, "botbin off");
  session.start();
  await settle();
  assert.equal(asked(), 1);
  assert.equal(views.at(-1)?.text, "[ok] botbin: 46 chunks");
  clock.advance(STATUS_POLL_MS);
  await settle();
  clock.advance(STATUS_POLL_MS);
  await settle();
  assert.equal(asked(), 3);
  session.changed();
  session.changed();
  clock.advance(AFTER_CHANGE_MS);
  await settle();
  assert.equal(asked(), 4);
  await session.dispose();
  clock.advance(10 * STATUS_POLL_MS);
  await settle();
  assert.equal(asked(), 4, "no poll after dispose");
});

test("a keyword-only server says so in the status text of every look", async () => {
  const { views, session } = harness(() => statusResult({ degraded: true }));
  session.start();
  await settle();
  assert.equal(views.at(-1)?.text, "[!] botbin: 46 chunks (keywords only)");
  await session.dispose();
});

test("an encrypted store's passphrase is offered once per try; a passphrase given begins a new try", async () => {
  const locked = statusResult();
  locked.folders[0]!.lastErrorKind = "locked";
  const { clock, offers, session, connections } = harness(() => locked);
  session.start();
  await settle();
  clock.advance(STATUS_POLL_MS);
  await settle();
  assert.deepEqual(offers, ["locked"]);
  const sent: Connection[] = [];
  await session.unlocked((connection) => void sent.push(connection));
  assert.deepEqual(sent, [connections[0]]);
  session.refreshStatus();
  await settle();
  assert.deepEqual(offers, ["locked", "locked"]);
  await session.dispose();
  assert.equal(connections[0]!.stopped, true);
});
