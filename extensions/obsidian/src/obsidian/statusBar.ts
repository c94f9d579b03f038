/** The status bar item: renders a StatusView (see core/statusModel.ts); a click shows its details. */
import { Notice, setTooltip } from "obsidian";
import type { StatusView } from "../core/statusModel";

export class StatusBar {
  private view: StatusView | undefined;

  constructor(private readonly el: HTMLElement) {
    el.addClass("botbin-status", "mod-clickable");
    el.addEventListener("click", () => {
      if (this.view) new Notice(this.view.tooltip, 10_000);
    });
  }

  render(view: StatusView): void {
    this.view = view;
    this.el.setText(view.text);
    setTooltip(this.el, view.tooltip, { placement: "top" });
    this.el.toggleClass("botbin-warning", view.severity === "warning");
    this.el.toggleClass("botbin-error", view.severity === "error");
  }
}
