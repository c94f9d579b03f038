/** Opens a hit's note with the cursor on the hit's first line and its lines scrolled into view. */
import { type App, MarkdownView, Notice } from "obsidian";
import type { Hit } from "@botbin/protocol";
import { hitRange } from "../core/places";

export async function openHit(app: App, hit: Hit, newLeaf = false): Promise<void> {
  const file = app.vault.getFileByPath(hit.path);
  if (!file) {
    new Notice(`botbin: ${hit.path} is no longer in the vault.`);
    return;
  }
  const leaf = app.workspace.getLeaf(newLeaf);
  const { from, to } = hitRange(hit);
  await leaf.openFile(file, { active: true, eState: { line: from.line } });
  if (leaf.view instanceof MarkdownView) {
    leaf.view.editor.setCursor(from);
    leaf.view.editor.scrollIntoView({ from, to }, true);
  }
}
