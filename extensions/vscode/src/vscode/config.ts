/** botbin's settings from VS Code's configuration, and news of their changes. */
import * as vscode from "vscode";
import { type ReadSettings, readSettings, settingsEditor } from "../core/settings";

export const SECTION = "botbin";

export function readConfig(): ReadSettings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return readSettings((key) => config.get(key));
}

/** Calls `listener` after any `botbin.*` setting changed. */
export function onConfigChange(listener: () => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((event) => {
    if (event.affectsConfiguration(SECTION)) listener();
  });
}

/** Opens the Settings editor on botbin's settings, on the tab where they apply (see settingsEditor). */
export async function openSettings(): Promise<void> {
  const [command, argument] = settingsEditor(vscode.env.remoteName);
  await vscode.commands.executeCommand(command, argument);
}
