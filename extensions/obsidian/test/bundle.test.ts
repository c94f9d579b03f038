// The release files: manifest.json and versions.json agree with package.json, and esbuild bundles the
// plugin into one CommonJS main.js that takes `obsidian` and CodeMirror from the app.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const json = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

test("manifest.json: desktop only, same version as package.json, listed in versions.json", () => {
  const manifest = json("manifest.json");
  const versions = json("versions.json");
  assert.equal(manifest.id, "botbin");
  assert.equal(manifest.isDesktopOnly, true);
  assert.equal(manifest.version, json("package.json").version);
  assert.equal(versions[manifest.version as string], manifest.minAppVersion);
  assert.doesNotMatch(manifest.id as string, /obsidian/, "Obsidian's rules: no 'obsidian' in the id");
});

test("esbuild bundles main.js with obsidian and CodeMirror external, minified for release", () => {
  const run = spawnSync(process.execPath, ["esbuild.mjs", "--production"], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const bundle = readFileSync("main.js", "utf8");
  assert.match(bundle, /require\("obsidian"\)/);
  assert.match(bundle, /require\("@codemirror\/view"\)/);
  assert.doesNotMatch(bundle, /sourceMappingURL/);
  assert.match(bundle, /botbin\/search/);
  assert.ok(bundle.length < 200_000, `main.js is ${bundle.length} bytes`);
  const exported = spawnSync(
    process.execPath,
    [
      "-e",
      `const Module = require("module"); const load = Module._load;
       Module._load = (name, ...rest) => name === "obsidian" ? { Plugin: class {}, ItemView: class {}, SuggestModal: class {}, Modal: class {}, PluginSettingTab: class {}, MarkdownView: class {}, FileSystemAdapter: class {}, TFile: class {}, Notice: class {} }
         : name === "@codemirror/view" ? { EditorView: {} } : load(name, ...rest);
       const plugin = require("./main.js"); console.log(typeof plugin.default.prototype.onload, typeof plugin.default.prototype.onunload);`,
    ],
    { encoding: "utf8" },
  );
  assert.equal(exported.status, 0, exported.stderr);
  assert.equal(exported.stdout.trim(), "function function", "a default export with onload and onunload");
});
