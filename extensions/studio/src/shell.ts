// What every view gets from the page (main.ts), and how a view says where it stands: a panel's data-state is
// "loading", "ready" or "error", and a "botbin:ready:<view>" performance mark is set when it is first drawn (the
// browser test and bench/bench_studio.py wait on them).
import type { StudioInfo } from "@botbin/protocol";
import type { Api } from "./api";
import { ApiError } from "./api";
import { h } from "./dom";

export interface Ctx {
  api: Api;
  info: StudioInfo;
  /** The workspace folder chosen now (its id). */
  folder(): number;
  /** Say ``message`` in the page's live region (screen readers read it). */
  announce(message: string): void;
  /** Ask before an action that writes; true when the user confirms. */
  confirm(title: string, message: string, action: string): Promise<boolean>;
}

export interface View {
  id: string;
  title: string;
  /** Build the view's controls into ``panel`` (once). */
  mount(panel: HTMLElement, ctx: Ctx): void;
  /** The view became visible, or the folder changed: load what it shows. */
  show(): void;
}

/** Mark ``panel`` as ``state``; "ready" also sets the view's performance mark. */
export function setState(panel: HTMLElement, state: "loading" | "ready" | "error"): void {
  panel.dataset.state = state;
  panel.setAttribute("aria-busy", state === "loading" ? "true" : "false");
  if (state === "ready") performance.mark(`botbin:ready:${panel.dataset.view ?? "?"}`);
}

/** An error as the views show it (role=alert, so it is read at once). */
export function errorBox(err: unknown): HTMLElement {
  const message = err instanceof ApiError ? `${err.message} (${err.kind})` : String(err);
  return h("p", { class: "error", role: "alert" }, message);
}

/** Run ``load`` for ``panel``: loading while it runs, then ready, or the error shown in ``target``. */
export async function loading(panel: HTMLElement, target: HTMLElement, load: () => Promise<void>): Promise<void> {
  setState(panel, "loading");
  try {
    await load();
    setState(panel, "ready");
  } catch (err) {
    target.replaceChildren(errorBox(err));
    setState(panel, "error");
  }
}
