// The Obsidian community plugin review rules that a grep can check, over every source file of the plugin:
// no HTML strings into the DOM, every app event registered (so it is removed when the plugin unloads), no
// listener on window or document that outlives the plugin, and no global `app`.
import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const SRC = join(process.cwd(), "src"); // tests run from the package folder (npm test)

function sources(dir = SRC): { path: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [{ path, text: readFileSync(path, "utf8") }] : [];
  });
}

/** Lines of `text` (1-based) that match `pattern`, as `file:line: text`. */
function offending(pattern: RegExp, accept: (line: string) => boolean = () => false): string[] {
  return sources().flatMap(({ path, text }) =>
    text
      .split("\n")
      .map((line, index) => ({ line, index }))
      .filter(({ line }) => pattern.test(line) && !accept(line) && !line.trim().startsWith("//"))
      .map(({ line, index }) => `${path.slice(SRC.length + 1)}:${index + 1}: ${line.trim()}`),
  );
}

test("the plugin has sources to check", () => {
  assert.ok(sources().length > 10);
});

test("no innerHTML, outerHTML or insertAdjacentHTML: the DOM is built with createEl and setText", () => {
  assert.deepEqual(offending(/\b(innerHTML|outerHTML|insertAdjacentHTML)\b/), []);
});

test("every vault, workspace and metadata-cache event is registered with registerEvent", () => {
  const on = /\b(vault|workspace|metadataCache)\.on\(/;
  const registered = sources().flatMap(({ path, text }) => {
    const calls = [...text.matchAll(new RegExp(on.source, "g"))];
    return calls
      .filter((call) => !/registerEvent\(\s*$/.test(text.slice(Math.max(0, (call.index ?? 0) - 40), call.index)))
      .map((call) => `${path.slice(SRC.length + 1)}: ${text.slice(call.index, (call.index ?? 0) + 40)}`);
  });
  assert.deepEqual(registered, []);
});

test("no listener on window or document outside registerDomEvent", () => {
  assert.deepEqual(offending(/\b(window|document|activeWindow|activeDocument)\.addEventListener\(/), []);
});

test("no global app: every `app.` is a parameter or a property of the plugin", () => {
  const bare = sources().flatMap(({ path, text }) => {
    if (!/(?<![.\w])app\./.test(text)) return [];
    const bound = /\bapp: App\b|\(app\b|\bapp,|\{ app\b/.test(text);
    return bound ? [] : [path.slice(SRC.length + 1)];
  });
  assert.deepEqual(bare, []);
  assert.deepEqual(offending(/\bwindow\.app\b|globalThis\.app\b/), []);
});
