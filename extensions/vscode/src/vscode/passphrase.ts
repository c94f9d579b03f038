/**
 * The passphrase of an encrypted store: asked with a password box, kept in VS Code's SecretStorage (the
 * system keychain; never a file or setting of the extension's), one per workspace.
 */
import * as vscode from "vscode";

/** Where this workspace's passphrase is kept: SecretStorage is shared by every workspace of the extension. */
export function passphraseKey(folder: vscode.Uri | undefined): string {
  return `botbin.passphrase:${folder?.toString() ?? "no-folder"}`;
}

export class PassphraseStore {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly key: () => string = () => passphraseKey(vscode.workspace.workspaceFolders?.[0]?.uri),
  ) {}

  async get(): Promise<string | undefined> {
    return (await this.secrets.get(this.key())) || undefined;
  }

  async store(passphrase: string): Promise<void> {
    await this.secrets.store(this.key(), passphrase);
  }

  async delete(): Promise<void> {
    await this.secrets.delete(this.key());
  }
}

/** Asks for the passphrase in a password box; undefined when the user cancels. */
export async function askPassphrase(): Promise<string | undefined> {
  const passphrase = await vscode.window.showInputBox({
    title: "botbin: passphrase of the encrypted memory",
    prompt: "Opens this workspace's encrypted botbin store. Kept in VS Code's secret storage, never in settings.",
    password: true,
    ignoreFocusOut: true,
    validateInput: (value) => (value ? undefined : "The passphrase cannot be empty."),
  });
  return passphrase || undefined;
}
