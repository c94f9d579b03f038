// Memory lifecycle: the most faded memos with their retention curves (the last retrieval marked), what the next
// prune would archive, the archived memos (restore), and the roots with the branches they came from. The buttons
// that write (prune, restore, consolidate) ask first and go through the server's service.
import type {
  ConsolidateResult,
  PruneResult,
  RestoreResult,
  StudioArchived,
  StudioLifecycle,
  StudioMemo,
  StudioRoot,
} from "@botbin/protocol";
import { folderPath } from "../api";
import { curveLayout } from "../charts";
import { editorLink, fill, h, svg } from "../dom";
import { days, place, score, when } from "../format";
import type { Ctx, View } from "../shell";
import { errorBox, loading } from "../shell";

const W = 160;
const H = 36;

export function sparkline(memo: StudioMemo, threshold: number): SVGElement {
  const layout = curveLayout(memo.curve, threshold, W, H);
  const retrieved = memo.reinforcementCount
    ? `retrieved ${memo.reinforcementCount} times, last ${when(memo.lastRetrieved)}`
    : `never retrieved, created ${when(memo.created)}`;
  const label = `retention ${score(memo.decayScore)} now, under ${threshold} ${days(memo.fadesInDays)}; ${retrieved}`;
  const box = svg("svg", {
    class: "spark",
    viewBox: `0 0 ${W} ${H}`,
    width: W,
    height: H,
    role: "img",
    "aria-label": label,
  });
  if (!layout) return box;
  box.append(
    svg("line", { class: "threshold", x1: 0, x2: W, y1: layout.thresholdY, y2: layout.thresholdY }),
    svg("path", { class: "curve", d: layout.path }),
  );
  if (layout.nowX !== null) box.append(svg("line", { class: "now", x1: layout.nowX, x2: layout.nowX, y1: 0, y2: H }));
  const mark = svg("circle", {
    class: memo.reinforcementCount ? "mark reinforced" : "mark created",
    cx: layout.start.x + 3,
    cy: Math.max(3, layout.start.y),
    r: 3,
  });
  mark.append(svg("title", {}, retrieved));
  box.append(mark);
  return box;
}

function memoRow(memo: StudioMemo, threshold: number): HTMLTableRowElement {
  const where = place(memo.path, memo.startLine, memo.endLine);
  return h(
    "tr",
    { "data-memo": memo.id },
    h(
      "td",
      {},
      editorLink(memo.editorUrl, where, `Open ${where} in the editor`),
      h("div", { class: "excerpt" }, memo.text),
    ),
    h("td", {}, h("span", { class: `kind kind-${memo.kind}` }, memo.kind)),
    h("td", { class: "num" }, score(memo.decayScore)),
    h("td", { class: "num" }, String(memo.reinforcementCount)),
    h("td", {}, `${memo.halfLifeDays.toFixed(1)} d`),
    h("td", {}, days(memo.fadesInDays)),
    h("td", {}, sparkline(memo, threshold)),
  );
}

function memoTable(caption: string, memos: StudioMemo[], threshold: number): HTMLElement {
  if (!memos.length) return h("p", { class: "empty" }, `${caption}: none.`);
  const heads = ["Memo", "Kind", "Retention", "Retrieved", "Half-life", "Under threshold", "Curve"];
  return h(
    "table",
    { class: "memos" },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, ...heads.map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, ...memos.map((m) => memoRow(m, threshold))),
  );
}

function rootItem(root: StudioRoot): HTMLElement {
  return h(
    "li",
    { class: "root" },
    h("p", { class: "root-text" }, root.text, root.reason ? h("span", { class: "reason" }, ` · ${root.reason}`) : null),
    h(
      "ul",
      { class: "branches", "aria-label": "branches" },
      ...root.sources.map((s) => h("li", {}, editorLink(s.editorUrl, place(s.path, s.startLine, s.endLine)))),
    ),
  );
}

export const lifecycleView: View = (() => {
  let panel: HTMLElement;
  let ctx: Ctx;
  let body: HTMLElement;
  let notice: HTMLElement;

  async function act<T>(
    what: string,
    ask: string | null,
    path: string,
    params: unknown,
    done: (r: T) => string,
  ): Promise<void> {
    if (ask !== null && !(await ctx.confirm(what, ask, what))) return;
    try {
      const result = await ctx.api.post<T>(folderPath(ctx.folder(), path), params);
      const message = done(result);
      fill(notice, h("p", { role: "status" }, message));
      ctx.announce(message);
      lifecycleView.show();
    } catch (err) {
      fill(notice, errorBox(err));
    }
  }

  function archivedItem(m: StudioArchived): HTMLElement {
    const button = h("button", { type: "button", class: "secondary" }, "Restore…");
    button.setAttribute("aria-label", `Restore ${place(m.path, m.startLine, m.endLine)}`);
    button.addEventListener(
      "click",
      () =>
        void act<RestoreResult>(
          "Restore",
          `Bring ${m.path} ${m.id.slice(0, 8)} back into search?`,
          "restore",
          { ids: [m.id] },
          (r) => `restored ${r.restored.length}`,
        ),
    );
    return h(
      "li",
      { class: "archived" },
      h("span", { class: "path" }, place(m.path, m.startLine, m.endLine)),
      ` archived ${when(m.archivedAt)} · retention ${score(m.decayScore)} `,
      ctx.info.readOnly ? null : button,
      m.text ? h("pre", { class: "text" }, m.text) : null,
    );
  }

  function actions(view: StudioLifecycle): HTMLElement | null {
    if (ctx.info.readOnly) return null;
    const prune = h("button", { type: "button", class: "danger" }, `Prune ${view.prunableCount}…`);
    prune.addEventListener(
      "click",
      () =>
        void act<PruneResult>(
          "Prune",
          `Archive ${view.prunableCount} memos under ${view.threshold} out of search? The notes stay as they are; restore brings them back.`,
          "prune",
          {},
          (r) => `archived ${r.archived.length} memos; ${r.live} stay searchable`,
        ),
    );
    const preview = h("button", { type: "button", class: "secondary" }, "Preview consolidation");
    preview.addEventListener(
      "click",
      () =>
        void act<ConsolidateResult>(
          "Preview",
          null,
          "consolidate",
          { dryRun: true },
          (r) => `would add ${r.roots.length} roots (${r.skipped} already there)`,
        ),
    );
    const consolidate = h("button", { type: "button", class: "danger" }, "Consolidate…");
    consolidate.addEventListener(
      "click",
      () =>
        void act<ConsolidateResult>(
          "Consolidate",
          `Append the new roots to ${view.rootsNote} (its other lines are kept) and sync it?`,
          "consolidate",
          { dryRun: false },
          (r) => `added ${r.roots.length} roots to ${r.rootsNote}`,
        ),
    );
    return h(
      "div",
      { class: "actions", role: "group", "aria-label": "Lifecycle actions" },
      prune,
      preview,
      consolidate,
    );
  }

  function draw(view: StudioLifecycle): void {
    const facts = h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Live memos"),
      h("dd", {}, String(view.live)),
      h("dt", {}, "Prune threshold"),
      h("dd", {}, String(view.threshold)),
      h("dt", {}, "Half-life"),
      h("dd", {}, `${view.halfLifeDays} days, +${view.stretch}× per retrieval`),
    );
    const roots = view.roots.length
      ? h("ol", { class: "roots" }, ...view.roots.map(rootItem))
      : h("p", { class: "empty" }, `No roots in ${view.rootsNote} yet.`);
    fill(
      body,
      ...view.warnings.map((w) => h("p", { class: "warning" }, w)),
      facts,
      actions(view),
      h(
        "section",
        { "aria-labelledby": "prunable-title" },
        h("h2", { id: "prunable-title" }, `Next prune would archive (${view.prunableCount})`),
        memoTable("Next prune", view.prunable, view.threshold),
      ),
      h(
        "section",
        { "aria-labelledby": "faded-title" },
        h("h2", { id: "faded-title" }, "Most faded memos"),
        memoTable("Most faded", view.faded, view.threshold),
      ),
      h(
        "section",
        { "aria-labelledby": "roots-title" },
        h("h2", { id: "roots-title" }, "Roots and their branches ", editorLink(view.rootsUrl, view.rootsNote)),
        roots,
      ),
      h(
        "section",
        { "aria-labelledby": "archived-title" },
        h("h2", { id: "archived-title" }, `Archived (${view.archived.length})`),
        view.archived.length
          ? h("ul", { class: "archive" }, ...view.archived.map(archivedItem))
          : h("p", { class: "empty" }, "Nothing is archived."),
      ),
    );
  }

  return {
    id: "lifecycle",
    title: "Memory lifecycle",
    mount(p, c) {
      panel = p;
      ctx = c;
      notice = h("div", { class: "notice" });
      body = h("div", { class: "results" });
      fill(panel, notice, body);
    },
    show() {
      void loading(panel, body, async () =>
        draw(await ctx.api.get<StudioLifecycle>(folderPath(ctx.folder(), "lifecycle"))),
      );
    },
  };
})();
