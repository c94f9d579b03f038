// Health: last sync, stale notes, notes that failed and why, index size, model, encryption, team database; a Sync
// button that asks first.
import type { StudioHealth, StudioSyncResult } from "@botbin/protocol";
import { folderPath } from "../api";
import { fill, h } from "../dom";
import { when } from "../format";
import type { Ctx, View } from "../shell";
import { errorBox, loading } from "../shell";

function fact(name: string, value: string, id: string): HTMLElement[] {
  return [h("dt", {}, name), h("dd", { "data-fact": id }, value)];
}

function list(title: string, id: string, items: HTMLElement[], empty: string): HTMLElement {
  return h(
    "section",
    { "aria-labelledby": id },
    h("h2", { id }, `${title} (${items.length})`),
    items.length ? h("ul", { class: "plain" }, ...items) : h("p", { class: "empty" }, empty),
  );
}

export const healthView: View = (() => {
  let panel: HTMLElement;
  let ctx: Ctx;
  let body: HTMLElement;
  let notice: HTMLElement;

  async function sync(): Promise<void> {
    if (!(await ctx.confirm("Sync", "Sync the changed notes into the index now?", "Sync"))) return;
    try {
      const r = await ctx.api.post<StudioSyncResult>(folderPath(ctx.folder(), "sync"), {});
      const rep = r.report;
      const message =
        `synced: ${rep.added.length} added, ${rep.modified.length} modified, ${rep.deleted.length} deleted, ` +
        `${rep.failed.length} failed` +
        (r.publishError ? `; not published: ${r.publishError}` : "");
      fill(notice, h("p", { role: "status" }, message));
      ctx.announce(message);
      healthView.show();
    } catch (err) {
      fill(notice, errorBox(err));
    }
  }

  function draw(health: StudioHealth): void {
    const s = health.status;
    const team = health.team;
    const facts = h(
      "dl",
      { class: "facts" },
      ...fact("Last sync", when(s.lastSync), "last-sync"),
      ...fact("Index", `${s.files} notes, ${s.chunks} chunks`, "index"),
      ...fact("Tracked on disk", String(s.tracked), "tracked"),
      ...fact("Model", s.model ?? "unknown", "model"),
      ...fact("Encryption", s.encryption, "encryption"),
      ...fact("Indexing now", health.indexing ? "yes" : "no", "indexing"),
      ...fact(
        "Team database",
        team
          ? `${team.url} · ${team.namespace}${team.error ? ` · unreachable: ${team.error}` : team.unpublished ? ` · ${team.unpublished} unpublished` : ""}`
          : "none (embedded index)",
        "team",
      ),
      ...fact("Rule conflicts", String(s.conflicts.length), "conflicts"),
    );
    const button = ctx.info.readOnly ? null : h("button", { type: "button", class: "danger" }, "Sync now…");
    button?.addEventListener("click", () => void sync());
    const stale = s.stale.map((n) =>
      h("li", { "data-path": n.path }, h("span", { class: "path" }, n.path), ` ${n.reason}`),
    );
    const failed = health.failed.map((n) =>
      h(
        "li",
        { "data-path": n.path },
        h("span", { class: "path" }, n.path),
        h("span", { class: "reason" }, ` ${n.reason}`),
      ),
    );
    const warnings = [...s.warnings, ...health.loadWarnings].map((w) => h("li", {}, w));
    fill(
      body,
      facts,
      button ? h("div", { class: "actions" }, button) : null,
      list("Stale notes", "stale-title", stale, "Every tracked note is as it was synced."),
      list(
        "Failed notes",
        "failed-title",
        failed,
        health.lastRun
          ? "The last sync indexed every note."
          : "No sync has run in this session (Sync now finds the notes that fail).",
      ),
      list("Warnings", "warnings-title", warnings, "None."),
    );
  }

  return {
    id: "health",
    title: "Health",
    mount(p, c) {
      panel = p;
      ctx = c;
      notice = h("div", { class: "notice" });
      body = h("div", { class: "results" });
      fill(panel, notice, body);
    },
    show() {
      void loading(panel, body, async () => draw(await ctx.api.get<StudioHealth>(folderPath(ctx.folder(), "health"))));
    },
  };
})();
