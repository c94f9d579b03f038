/**
 * botbin for VS Code: a thin client of `botbin lsp`. Activation wires the log, the interpreter lookup,
 * the supervised language client, the passphrase store (secret storage) and the commands; everything else
 * lives in the server.
 */
import type * as vscode from "vscode";
import { registerCommands } from "./vscode/commands";
import { activeInterpreter } from "./vscode/interpreter";
import { ServerLog } from "./vscode/output";
import { PassphraseStore } from "./vscode/passphrase";
import { Session } from "./vscode/session";

let session: Session | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = new ServerLog("botbin");
  session = new Session(log, (resource) => activeInterpreter(resource), new PassphraseStore(context.secrets));
  context.subscriptions.push(log, ...registerCommands(session));
  // starts in the background: activation (and editing) never waits for the server
  session.start();
}

export async function deactivate(): Promise<void> {
  await session?.dispose();
  session = undefined;
}
