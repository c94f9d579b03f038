// Bundles the plugin into dist/index.mjs (ESM, Node 24: OpenClaw's own floor); OpenClaw's SDK is imported at run
// time only (resolved by the host's plugin loader), so nothing of the host is bundled.
import { build } from "esbuild";

await build({
  entryPoints: ["src/index.ts"],
  outfile: "dist/index.mjs",
  bundle: true,
  platform: "node",
  target: "node22",
  format: "esm",
  sourcemap: false,
  legalComments: "inline",
  logLevel: "warning",
});
