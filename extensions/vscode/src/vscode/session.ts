/**
 * The extension's running state: the supervised language server, its settings, indexing progress and
 * status, and the status bar that shows them. Commands reach the server only through `api`. The passphrase
 * of an encrypted store lives in secret storage and in this object's memory only; the server gets it in
 * `initializationOptions` and `didChangeConfiguration`, never through the settings.
 */
import { homedir } from "node:os";
import * as vscode from "vscode";
import type { ErrorReport } from "@botbin/protocol";
import {
  type BotbinApi,
  ClientSession,
  type LockedError,
  type ProgressTracker,
  type ServerState,
  systemClock,
} from "@botbin/client";
import { COMMAND_IDS } from "../core/commandIds";
import { ENTER_PASSPHRASE, failureMessage, lockedMessage, OPEN_SETTINGS, RESTART, SHOW_LOG } from "../core/messages";
import { describeCommand, resolveServerCommand, type ServerCommand } from "../core/serverCommand";
import { commandChanged, type ExtensionSettings, serverSettingsChanged } from "../core/settings";
import { VSCODE_LOOK } from "../core/statusModel";
import { BotbinConnection } from "./client";
import { onConfigChange, openSettings, readConfig } from "./config";
import type { ServerLog } from "./output";
import { askPassphrase, type PassphraseStore } from "./passphrase";
import { StatusBar } from "./statusBar";

export type InterpreterLookup = (resource: vscode.Uri | undefined) => Promise<string | undefined>;

export class Session implements vscode.Disposable {
  settings: ExtensionSettings;
  private readonly core: ClientSession<BotbinConnection>;
  private readonly statusBar = new StatusBar();
  private readonly disposables: vscode.Disposable[] = [];
  private command: ServerCommand | undefined;
  private passphrase: string | undefined;

  constructor(
    readonly log: ServerLog,
    private readonly findInterpreter: InterpreterLookup,
    private readonly secrets: PassphraseStore,
  ) {
    this.settings = this.loadSettings();
    this.core = new ClientSession<BotbinConnection>({
      connect: (onClosed, progress) => this.connect(onClosed, progress),
      clock: systemClock,
      look: VSCODE_LOOK,
      render: (view) => this.statusBar.render(view),
      onFailed: (state) => void this.reportFailure(state),
      onNotRunning: (message) => void vscode.window.showWarningMessage(message),
      offerPassphrase: (error) => void this.offerPassphrase(error),
      onState: (state) => this.log.info(`server ${state.kind}${"error" in state ? `: ${state.error}` : ""}`),
      onStatusError: (error) =>
        this.log.info(`botbin/status failed: ${error instanceof Error ? error.message : String(error)}`),
    });
    this.disposables.push(
      this.statusBar,
      onConfigChange(() => void this.configChanged()),
      vscode.workspace.onDidSaveTextDocument((document) => {
        if (document.languageId === "markdown") this.core.changed();
      }),
    );
  }

  start(): void {
    this.core.start();
  }

  restart(): Promise<void> {
    return this.core.restart();
  }

  /** The running server's requests, or undefined. */
  get api(): BotbinApi | undefined {
    return this.core.api;
  }

  /** The running server's requests, else undefined after telling the user why there is none. */
  requireApi(): BotbinApi | undefined {
    const state = this.core.state;
    if (state.kind === "failed" && !this.core.api) {
      void this.reportFailure(state);
      return undefined;
    }
    return this.core.requireApi();
  }

  /** Asks for the passphrase, keeps it in secret storage, and opens the store with it. */
  async setPassphrase(): Promise<void> {
    const passphrase = await askPassphrase();
    if (!passphrase) return;
    this.log.redact(passphrase);
    try {
      await this.secrets.store(passphrase);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      void vscode.window.showWarningMessage(
        `botbin: the passphrase could not be saved (${why}); it is used until VS Code closes.`,
      );
    }
    this.passphrase = passphrase;
    this.log.info("passphrase given; opening the encrypted memory");
    await this.core.unlocked((running) => running.sendSettings(this.settings, this.passphrase));
  }

  /** Removes the passphrase from secret storage and restarts the server without it. */
  async forgetPassphrase(): Promise<void> {
    await this.secrets.delete();
    this.passphrase = undefined;
    this.core.passphraseChanged();
    this.log.info("passphrase forgotten; restarting the language server without it");
    await this.restart();
    void vscode.window.showInformationMessage("botbin: passphrase forgotten.");
  }

  /** A sync ended (Sync Now / Reindex answered): note when, and ask for status. */
  synced(): void {
    this.core.synced();
  }

  /** Asks the server for status, then redraws the status bar. */
  refreshStatus(): void {
    this.core.refreshStatus();
  }

  private loadSettings(): ExtensionSettings {
    const { settings, problems } = readConfig();
    for (const problem of problems) this.log.info(problem);
    if (problems.length > 0) void vscode.window.showWarningMessage(`botbin: ${problems.join("; ")}`);
    return settings;
  }

  private async connect(onClosed: () => void, progress: ProgressTracker): Promise<BotbinConnection> {
    // read afresh at every (re)start: a changed executable setting applies even if no change event came
    this.settings = readConfig().settings;
    const folder = vscode.workspace.workspaceFolders?.[0];
    const { serverPath, pythonPath } = this.settings;
    const activeInterpreter = serverPath || pythonPath ? undefined : await this.findInterpreter(folder?.uri);
    this.command = resolveServerCommand({
      serverPath,
      pythonPath,
      activeInterpreter,
      platform: process.platform,
      workspaceFolder: folder?.uri.fsPath,
      home: homedir(),
    });
    this.passphrase =
      (await this.secrets.get().catch((error: unknown) => {
        this.log.info(`cannot read the passphrase from secret storage: ${String(error)}`);
        return undefined;
      })) ?? this.passphrase;
    if (this.passphrase) this.log.redact(this.passphrase);
    this.log.newRun();
    this.log.info(`starting ${describeCommand(this.command)} (from ${this.command.source})`);
    const deps = {
      command: this.command,
      settings: () => this.settings,
      passphrase: () => this.passphrase,
      onMessage: (type: number, message: string) => this.serverMessage(type, message),
      onError: (report: ErrorReport) => this.core.serverError(report),
      log: this.log,
      progress,
      cwd: folder?.uri.fsPath,
    };
    return new BotbinConnection(deps, onClosed);
  }

  private async reportFailure(state: Extract<ServerState, { kind: "failed" }>): Promise<void> {
    const commandLine = this.command ? describeCommand(this.command) : "botbin lsp";
    const message = failureMessage(state.reason, commandLine, state.error);
    const choice = await vscode.window.showErrorMessage(message, OPEN_SETTINGS, SHOW_LOG, RESTART);
    if (choice === OPEN_SETTINGS) await openSettings();
    else if (choice === SHOW_LOG) this.log.show();
    else if (choice === RESTART) await this.restart();
  }

  /** A `window/showMessage` of the server, unless a `botbin/error` already covered it (the passphrase box). */
  private serverMessage(type: number, message: string): void {
    if (this.core.serverMessage(message)) return;
    if (type === 1) void vscode.window.showErrorMessage(message);
    else if (type === 2) void vscode.window.showWarningMessage(message);
    else void vscode.window.showInformationMessage(message);
  }

  private async offerPassphrase(error: LockedError): Promise<void> {
    this.log.info(`the memory needs its passphrase (${error.kind}): ${error.message}`);
    const choice = await vscode.window.showErrorMessage(lockedMessage(error), ENTER_PASSPHRASE);
    if (choice === ENTER_PASSPHRASE) await vscode.commands.executeCommand(COMMAND_IDS.setPassphrase);
  }

  private async configChanged(): Promise<void> {
    const before = this.settings;
    this.settings = this.loadSettings();
    if (commandChanged(before, this.settings)) {
      await this.core.restart();
    } else if (serverSettingsChanged(before, this.settings)) {
      await this.core.running
        ?.sendSettings(this.settings, this.passphrase)
        .catch((error: unknown) => this.log.info(String(error)));
    }
  }

  async dispose(): Promise<void> {
    this.log.info("extension deactivated; stopping the language server");
    for (const disposable of this.disposables) disposable.dispose();
    await this.core.dispose();
  }
}
