import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { safeEditorUrl } from "../src/dom";

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

test("no source parses a string as HTML or runs one as code", () => {
  const banned =
    /\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|eval|Function)\s*[=(]/;
  const offenders = sources("src").filter((file) => banned.test(readFileSync(file, "utf-8")));
  assert.deepEqual(offenders, []);
  assert.ok(sources("src").length >= 8, "the sources were found");
});

test("an editor link is one of the editors' own schemes, else no link", () => {
  assert.equal(safeEditorUrl("vscode://file/home/me/notes/a.md:3:1"), "vscode://file/home/me/notes/a.md:3:1");
  assert.equal(safeEditorUrl("obsidian://open?path=%2Fhome%2Fme%2Fa.md"), "obsidian://open?path=%2Fhome%2Fme%2Fa.md");
  for (const bad of [
    "javascript:alert(1)",
    " javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "http://evil.example/",
    'vscode://file/a.md" onclick="alert(1)',
    "vscode://file/a b.md",
    "",
    null,
  ]) {
    assert.equal(safeEditorUrl(bad), null, String(bad));
  }
});
