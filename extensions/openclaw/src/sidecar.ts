// The client of a workspace's botbin server (`botbin serve`): one JSON line to its Unix socket, one JSON line back
// (the host ops of server/botbin/wire/hosts.py), each under a time limit; and the start of a server when none
// answers. Never throws: every failure is a Failure the engine logs and goes on from.
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname, join } from "node:path";
import { HOST_PROTOCOL } from "@botbin/protocol";

/** The longest answer read (a bigger one is a failure, not an allocation). */
const MAX_ANSWER_BYTES = 8 << 20;
/** A server started less than this long ago is left to come up instead of starting another, in milliseconds. */
export const START_GRACE_MS = 120_000;

export type FailureKind = "absent" | "timeout" | "declined" | "error";

/** Why an op gave no answer. */
export interface Failure {
  kind: FailureKind;
  /** The server's error kind (`locked`, `bad_request`, ...) when kind is "error". */
  errorKind?: string;
  message: string;
}

export type Answer = { ok: true; value: Record<string, unknown> } | { ok: false; failure: Failure };

function fail(kind: FailureKind, message: string, errorKind?: string): Answer {
  return { ok: false, failure: errorKind === undefined ? { kind, message } : { kind, message, errorKind } };
}

/** True when `folder` is a folder of this user that nobody else may write to (cli/warm.py private_dir). */
export function privateFolder(folder: string): boolean {
  try {
    const st = statSync(folder);
    const uid = typeof process.getuid === "function" ? process.getuid() : st.uid;
    return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** The answer of the op as the wire has it: ok, an error with its kind, or a decline (another version). */
export function readAnswer(text: string): Answer {
  if (!text.trim()) return fail("declined", "the server closed the connection without answering");
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return fail("declined", "the server's answer is not JSON");
  }
  if (data === null || typeof data !== "object") return fail("declined", "the server's answer is not an object");
  const answer = data as Record<string, unknown>;
  if (answer.ok === true) return { ok: true, value: answer };
  const error = answer.error as { kind?: unknown; message?: unknown } | undefined;
  if (answer.ok === false && error && typeof error === "object") {
    const kind = typeof error.kind === "string" ? error.kind : "error";
    return fail("error", typeof error.message === "string" ? error.message : kind, kind);
  }
  const reason = typeof answer.reason === "string" ? answer.reason : "unknown answer";
  return fail("declined", `the server declined: ${reason}`);
}

/** Send `{v, op, ...params}` to the socket at `path` and wait at most `timeoutMs` for the whole answer. */
export function ask(path: string, op: string, params: object, timeoutMs: number): Promise<Answer> {
  if (!privateFolder(dirname(path))) {
    return Promise.resolve(fail("absent", `no server: ${dirname(path)} is missing or not a private folder`));
  }
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const socket = createConnection(path);
    const finish = (answer: Answer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      done(answer);
    };
    const timer = setTimeout(() => finish(fail("timeout", `no answer to ${op} within ${timeoutMs} ms`)), timeoutMs);
    socket.on("connect", () => socket.end(JSON.stringify({ v: HOST_PROTOCOL, op, ...params }) + "\n"));
    socket.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) finish(fail("declined", `the answer to ${op} is over ${MAX_ANSWER_BYTES} bytes`));
      else chunks.push(chunk);
    });
    socket.on("end", () => finish(readAnswer(Buffer.concat(chunks).toString("utf8"))));
    socket.on("error", (err: NodeJS.ErrnoException) => {
      const absent = err.code === "ENOENT" || err.code === "ECONNREFUSED";
      finish(fail(absent ? "absent" : "error", absent ? `no server at ${path}` : `${op}: ${err.message}`));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A server start recorded in `marker` ({pid, startedAtMs}) that may still be coming up. */
export function startInProgress(marker: string, nowMs: number): boolean {
  try {
    const data = JSON.parse(readFileSync(marker, "utf8")) as { pid?: unknown; startedAtMs?: unknown };
    if (typeof data.pid !== "number" || typeof data.startedAtMs !== "number") return false;
    return nowMs - data.startedAtMs < START_GRACE_MS && alive(data.pid);
  } catch {
    return false;
  }
}

export interface StartRequest {
  botbinPath: string;
  workspace: string;
  /** The server stops after this long without a request, in seconds (0: never). */
  idleExitS: number;
  /** Folder of the marker file and of serve.log (the server's stderr). */
  stateDir: string;
  nowMs: number;
}

/** Start `botbin serve --workspace W --idle-exit-s S` in the background (its own process group, not a child the host waits
 * for); resolves to why it could not start, or null once it is on its way. */
export function startServer(req: StartRequest): Promise<string | null> {
  const marker = join(req.stateDir, "serve.json");
  if (startInProgress(marker, req.nowMs)) return Promise.resolve(null);
  mkdirSync(req.stateDir, { recursive: true, mode: 0o700 });
  const log = openSync(join(req.stateDir, "serve.log"), "a");
  return new Promise((done) => {
    const args = ["serve", "--workspace", req.workspace, "--idle-exit-s", String(req.idleExitS)];
    const child = spawn(req.botbinPath, args, {
      detached: true,
      stdio: ["ignore", "ignore", log],
    });
    closeSync(log);
    child.once("error", (err: NodeJS.ErrnoException) =>
      done(err.code === "ENOENT" ? `botbin is not installed (no "${req.botbinPath}" on PATH)` : err.message),
    );
    child.once("spawn", () => {
      writeFileSync(marker, JSON.stringify({ pid: child.pid, startedAtMs: req.nowMs }));
      child.unref();
      done(null);
    });
  });
}
