// Runs a front end's tests with node's own test runner: esbuild bundles each test/**/*.test.ts (TypeScript,
// workspace packages included) into out/test/, then `node --test` runs them.
// Usage, from a package folder: node ../run-tests.mjs [--alias module=./path.ts ...] [test name filter]
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";

const args = process.argv.slice(2);
const alias = {};
const filters = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--alias") {
    const [name, target] = args[++i].split("=");
    alias[name] = target;
  } else {
    filters.push(args[i]);
  }
}

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

const entryPoints = testFiles("test").filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (entryPoints.length === 0) {
  console.error(`no test files under ${process.cwd()}/test match ${filters.join(" ") || "*.test.ts"}`);
  process.exit(1);
}
rmSync("out/test", { recursive: true, force: true });
await build({
  entryPoints,
  outbase: "test",
  outdir: "out/test",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  sourcemap: "inline",
  alias,
  logLevel: "warning",
});
const outputs = entryPoints.map((f) => join("out", relative(".", f)).replace(/\.ts$/, ".js"));
const run = spawnSync(process.execPath, ["--enable-source-maps", "--test", ...outputs], { stdio: "inherit" });
process.exit(run.status ?? 1);
