/** The status bar item: renders a StatusView (see core/statusModel.ts); a click shows the status. */
import * as vscode from "vscode";
import { COMMAND_IDS } from "../core/commandIds";
import type { StatusView } from "../core/statusModel";

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem("botbin.status", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "botbin";
    this.item.command = COMMAND_IDS.status;
    this.item.show();
  }

  render(view: StatusView): void {
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor =
      view.severity === "ok"
        ? undefined
        : new vscode.ThemeColor(
            view.severity === "error" ? "statusBarItem.errorBackground" : "statusBarItem.warningBackground",
          );
  }

  dispose(): void {
    this.item.dispose();
  }
}
