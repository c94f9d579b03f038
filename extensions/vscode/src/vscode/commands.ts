/** The palette commands (ids in core/commandIds.ts); each reaches the server through the session. */
import * as vscode from "vscode";
import { COMMAND_IDS } from "../core/commandIds";
import { syncReport } from "../core/reports";
import { showRelated, showSearch, showStatus } from "./picks";
import type { Session } from "./session";

export function registerCommands(session: Session): vscode.Disposable[] {
  const register = (id: string, run: () => unknown): vscode.Disposable =>
    vscode.commands.registerCommand(id, async () => {
      try {
        await run();
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        session.log.info(`${id} failed: ${message}`);
        void vscode.window.showErrorMessage(`botbin: ${message}`);
      }
    });
  return [
    register(COMMAND_IDS.search, () => {
      if (!session.requireApi()) return;
      showSearch((query, signal) => {
        const api = session.api; // no pop-up per keystroke: the list itself says the server is gone
        return api ? api.search({ query }, signal) : Promise.reject(new Error("the language server is not running"));
      }, session.settings.searchDebounceMs);
    }),
    register(COMMAND_IDS.sync, () => sync(session, "sync")),
    register(COMMAND_IDS.reindex, () => sync(session, "reindex")),
    register(COMMAND_IDS.status, async () => {
      const api = session.requireApi();
      if (api) await showStatus(await api.status());
    }),
    register(COMMAND_IDS.related, async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor || editor.document.languageId !== "markdown") {
        void vscode.window.showInformationMessage("botbin: put the cursor in a markdown note first.");
        return;
      }
      const api = session.requireApi();
      if (!api) return;
      const { line, character } = editor.selection.active;
      const uri = editor.document.uri.toString();
      await showRelated(await api.related({ uri, position: { line, character } }));
    }),
    register(COMMAND_IDS.restart, () => session.restart()),
    register(COMMAND_IDS.log, () => session.log.show()),
    register(COMMAND_IDS.setPassphrase, () => session.setPassphrase()),
    register(COMMAND_IDS.forgetPassphrase, () => session.forgetPassphrase()),
  ];
}

async function sync(session: Session, what: "sync" | "reindex"): Promise<void> {
  const api = session.requireApi();
  if (!api) return;
  const title = what === "sync" ? "botbin: syncing notes" : "botbin: reindexing notes";
  const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title }, () =>
    api.sync(what),
  );
  session.synced();
  const { message, severity } = syncReport(result, what);
  if (severity === "error") void vscode.window.showErrorMessage(message);
  else if (severity === "warning") void vscode.window.showWarningMessage(message);
  else void vscode.window.showInformationMessage(message);
}
