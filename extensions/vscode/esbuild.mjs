// Bundles the extension into dist/extension.js (CommonJS, Node 20); `vscode` is provided by the editor.
// --production minifies and drops the source map (what `vsce package` ships).
import { build } from "esbuild";

const production = process.argv.includes("--production");
await build({
  entryPoints: ["src/extension.ts"],
  outfile: "dist/extension.js",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  external: ["vscode"],
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  legalComments: production ? "none" : "inline",
  logLevel: "warning",
});
