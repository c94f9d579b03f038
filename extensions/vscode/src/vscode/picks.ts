/** The QuickPicks: Search Memories (live), Show Related Memories and Show Status; opening a hit. */
import * as vscode from "vscode";
import type { Hit, RelatedResult, SearchResult, StatusResult } from "@botbin/protocol";
import { systemClock } from "@botbin/client";
import { type HitItem, resultCaveat, resultItems } from "../core/hits";
import { statusLines } from "../core/reports";
import { SearchController } from "../core/searchController";

/** Opens the hit's note with the hit's lines selected. */
export async function openHit(hit: Hit): Promise<void> {
  const { start, end } = hit.range;
  const selection = new vscode.Range(start.line, start.character, end.line, end.character);
  await vscode.window.showTextDocument(vscode.Uri.parse(hit.uri), { selection, preview: true });
}

/** Search Memories: queries as the user types (see SearchController). */
export function showSearch(
  search: (query: string, signal: AbortSignal) => Promise<SearchResult>,
  debounceMs: number,
): SearchController {
  const pick = vscode.window.createQuickPick<HitItem>();
  pick.matchOnDescription = false;
  pick.matchOnDetail = false;
  const controller = new SearchController(pick, {
    search,
    open: (hit) => openHit(hit),
    clock: systemClock,
    debounceMs,
  });
  controller.show();
  return controller;
}

/** Show Related Memories: the hits of `botbin/related` for the paragraph under the cursor. */
export async function showRelated(result: RelatedResult): Promise<void> {
  const items = resultItems(result).filter((item) => item.hit);
  if (items.length === 0) {
    const why = result.indexing ? " yet (botbin is still indexing)" : "";
    void vscode.window.showInformationMessage(`botbin: no related memories for this paragraph${why}.`);
    return;
  }
  const caveat = resultCaveat(result);
  const picked = await vscode.window.showQuickPick(items, {
    title: `botbin: related memories${caveat ? ` (${caveat})` : ""}`,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (picked?.hit) await openHit(picked.hit);
}

/** Show Status: totals, problems, folders; a stale note or a conflict opens its file. */
export async function showStatus(status: StatusResult): Promise<void> {
  const lines = statusLines(status);
  const picked = await vscode.window.showQuickPick(lines, { title: "botbin: status", matchOnDescription: true });
  if (picked?.path) {
    const line = picked.line ?? 0;
    await vscode.window.showTextDocument(vscode.Uri.file(picked.path), {
      selection: new vscode.Range(line, 0, line, 0),
    });
  }
}
