/** The palette commands and the ribbon icon; each reaches the server through the session. */
import { type Editor, Notice, type Plugin } from "obsidian";
import type { Hit } from "@botbin/protocol";
import type { Session } from "../core/session";

export const COMMAND_IDS = {
  search: "search-memories",
  related: "show-related-memories",
  remember: "remember-selection",
  sync: "sync-now",
  reindex: "reindex",
  status: "show-status",
  restart: "restart-server",
  unlock: "unlock-encrypted-memory",
} as const;

export interface CommandDeps {
  session: Session;
  openSearch(): void;
  openRelatedPane(): Promise<void>;
  rememberTags(): string[];
  /** Asks for the passphrase of an encrypted store (the unlock modal). */
  unlock(): void;
}

export function registerCommands(plugin: Plugin, deps: CommandDeps): void {
  const { session } = deps;
  const guarded = (run: () => Promise<unknown>) => (): void =>
    void run().catch(
      (error: unknown) => new Notice(`botbin: ${error instanceof Error ? error.message : String(error)}`),
    );
  plugin.addRibbonIcon("brain-circuit", "Search memories (botbin)", () => deps.openSearch());
  plugin.addCommand({ id: COMMAND_IDS.search, name: "Search memories", callback: () => deps.openSearch() });
  plugin.addCommand({
    id: COMMAND_IDS.related,
    name: "Show related memories",
    callback: guarded(deps.openRelatedPane),
  });
  plugin.addCommand({
    id: COMMAND_IDS.remember,
    name: "Remember selection",
    editorCallback: (editor: Editor) => guarded(() => remember(session, editor.getSelection(), deps.rememberTags()))(),
  });
  for (const what of ["sync", "reindex"] as const) {
    plugin.addCommand({
      id: COMMAND_IDS[what],
      name: what === "sync" ? "Sync now" : "Reindex",
      callback: guarded(async () => {
        const api = session.requireApi();
        if (!api) return;
        const result = await api.sync(what);
        session.refreshStatus();
        const errors = result.folders.map((f) => f.error).filter(Boolean);
        const count = (pick: (f: (typeof result.folders)[number]) => number): number =>
          result.folders.reduce((n, f) => n + pick(f), 0);
        new Notice(
          errors.length > 0
            ? `botbin: ${what} failed: ${errors.join("; ")}`
            : `botbin: ${count((f) => f.added.length)} added, ${count((f) => f.modified.length)} modified, ` +
                `${count((f) => f.deleted.length)} deleted, ${count((f) => f.unchanged)} unchanged` +
                (result.done ? "" : " (still running)"),
        );
      }),
    });
  }
  plugin.addCommand({
    id: COMMAND_IDS.status,
    name: "Show status",
    callback: guarded(async () => {
      const status = await session.requireApi()?.status();
      if (!status) return;
      new Notice(
        `botbin: ${status.files} notes, ${status.chunks} chunks; last sync ${status.lastSync ?? "never"}` +
          `${status.degraded ? "; keyword search only" : ""}${status.pending > 0 ? `; ${status.pending} pending` : ""}` +
          `${status.folders.some((f) => f.encryption === "on") ? "; encrypted" : ""}`,
        10_000,
      );
    }),
  });
  plugin.addCommand({ id: COMMAND_IDS.restart, name: "Restart server", callback: guarded(() => session.restart()) });
  plugin.addCommand({ id: COMMAND_IDS.unlock, name: "Unlock encrypted memory", callback: () => deps.unlock() });
}

/** Remember selection: appends the selected text to today's daily note through `botbin/remember`. */
export async function remember(session: Session, selection: string, tags: string[]): Promise<Hit["path"] | undefined> {
  const text = selection.trim();
  if (!text) {
    new Notice("botbin: select the text to remember first.");
    return undefined;
  }
  const api = session.requireApi();
  if (!api) return undefined;
  const result = await api.remember(tags.length > 0 ? { text, tags } : { text });
  new Notice(`botbin: remembered in ${result.path}`);
  return result.path;
}
