// Where a workspace's botbin server listens: the rule of server/botbin/cli/warm.py, kept in step by
// tests/hosts/test_openclaw_unit_contract.py (which compares this function's answers with Python's).
import { createHash } from "node:crypto";
import { realpathSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** `$XDG_RUNTIME_DIR/botbin` when that folder exists, else `<tmp>/botbin-<uid>`. */
export function runtimeDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_RUNTIME_DIR;
  if (base) {
    try {
      if (statSync(base).isDirectory()) return join(base, "botbin");
    } catch {
      // not there: the temporary folder
    }
  }
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return join(tmpdir(), `botbin-${uid}`);
}

/** Python's Path.resolve(): symlinks resolved where the path exists, made absolute either way. */
export function resolvedPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The socket of workspace `root`: sha256 of its resolved path, first 20 hex digits, `.sock`. */
export function socketPath(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const key = createHash("sha256").update(resolvedPath(root), "utf8").digest("hex").slice(0, 20);
  return join(runtimeDir(env), `${key}.sock`);
}
