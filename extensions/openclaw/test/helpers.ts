// A stand-in for `botbin serve` in the engine's unit tests: a real Unix socket in a private folder that reads one
// JSON line and answers what the test scripts (or never answers, to test the time limit). The end-to-end tests
// (tests/hosts/test_openclaw.py) run the real botbin inside the real OpenClaw.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompactionStore } from "../src/compaction";
import { BotbinEngine } from "../src/engine";
import type { PluginLogger, RuntimeCompaction } from "../src/host";
import { MemoryLink } from "../src/link";
import { DEFAULTS, type Settings } from "../src/settings";
import { Spool } from "../src/spool";

export type Script = (request: Record<string, unknown>) => Record<string, unknown> | "hang";

export interface FakeBotbin {
  socket: string;
  requests: Record<string, unknown>[];
  script: Script;
  close(): Promise<void>;
}

export async function fakeBotbin(dir: string, script: Script): Promise<FakeBotbin> {
  const folder = join(dir, "run");
  mkdirSync(folder, { mode: 0o700, recursive: true });
  const socket = join(folder, "botbin.sock");
  const fake: FakeBotbin = { socket, requests: [], script, close: async () => undefined };
  const open = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (conn) => {
    open.add(conn);
    conn.on("close", () => open.delete(conn));
    let data = "";
    conn.on("data", (chunk) => (data += chunk.toString("utf8")));
    conn.on("end", () => {
      const request = JSON.parse(data) as Record<string, unknown>;
      fake.requests.push(request);
      const answer = fake.script(request);
      if (answer !== "hang") conn.end(JSON.stringify(answer) + "\n");
    });
    conn.on("error", () => undefined);
  });
  await new Promise<void>((done) => server.listen(socket, done));
  fake.close = () =>
    new Promise<void>((done) => {
      open.forEach((conn) => conn.destroy()); // a "hang" left its connection open
      server.close(() => done());
    });
  return fake;
}

export function tempDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), "botbin-openclaw-test-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export class Logs implements PluginLogger {
  readonly lines: string[] = [];
  info = (m: string): void => void this.lines.push(`info ${m}`);
  warn = (m: string): void => void this.lines.push(`warn ${m}`);
  error = (m: string): void => void this.lines.push(`error ${m}`);
}

export interface Rig {
  engine: BotbinEngine;
  logs: Logs;
  spool: Spool;
  compactions: CompactionStore;
  started: string[];
  runtimeCalls: number;
}

/** An engine on `socket` with its state under `dir`; `settings` override the defaults. */
export function rig(dir: string, socket: string, settings: Partial<Settings> = {}, runtime?: RuntimeCompaction): Rig {
  const logs = new Logs();
  const all: Settings = { ...DEFAULTS, workspace: join(dir, "notes"), startServer: false, ...settings };
  const stateDir = join(dir, "state");
  const started: string[] = [];
  const link = new MemoryLink({
    socket,
    settings: all,
    stateDir,
    logger: logs,
    start: async (req) => {
      started.push(req.workspace);
      return null;
    },
  });
  const spool = new Spool(join(stateDir, "spool.jsonl"));
  const compactions = new CompactionStore(join(stateDir, "compactions.json"));
  const out: Rig = { engine: undefined as unknown as BotbinEngine, logs, spool, compactions, started, runtimeCalls: 0 };
  const wrapped: RuntimeCompaction | undefined =
    runtime &&
    (async (p) => {
      out.runtimeCalls += 1;
      return runtime(p);
    });
  out.engine = new BotbinEngine({
    settings: all,
    link,
    spool,
    compactions,
    logger: logs,
    runtimeCompaction: async () => wrapped,
  });
  return out;
}

export function ok(fields: Record<string, unknown>): Record<string, unknown> {
  return { v: 1, ok: true, ...fields };
}
