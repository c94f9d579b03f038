// Bundles the plugin into main.js (CommonJS, as Obsidian loads plugins). `obsidian`, `electron` and
// CodeMirror are provided by the app; Node's built-ins are there on the desktop (isDesktopOnly).
// --production minifies and drops the source map (what a release ships with manifest.json and styles.css).
import { build } from "esbuild";

const production = process.argv.includes("--production");
await build({
  entryPoints: ["src/main.ts"],
  outfile: "main.js",
  bundle: true,
  platform: "node",
  target: "es2022",
  format: "cjs",
  external: ["obsidian", "electron", "@codemirror/*", "@lezer/*"],
  minify: production,
  sourcemap: production ? false : "inline",
  sourcesContent: false,
  legalComments: production ? "none" : "inline",
  logLevel: "warning",
});
