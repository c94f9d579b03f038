// Bundles Recall Studio's page into the Python package, which serves it (server/botbin/studio/page.py inlines both
// files under a nonce): one minified browser script and its stylesheet, no source map, no external request at run
// time. The output is committed, so that `pip install` and `scripts/setup.sh --python-only` serve the page without
// npm; tests/studio/test_bundle.py rebuilds it and fails when the committed files are stale.
// Usage: node esbuild.mjs [--outdir DIR]
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const at = process.argv.indexOf("--outdir");
const outdir = at > 0 ? process.argv[at + 1] : "../../server/botbin/studio/static";
mkdirSync(outdir, { recursive: true });
await build({
  entryPoints: ["src/main.ts"],
  outfile: join(outdir, "studio.js"),
  bundle: true,
  platform: "browser",
  target: ["chrome110", "firefox115"],
  format: "iife",
  minify: true,
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
});
copyFileSync("src/studio.css", join(outdir, "studio.css"));
