// Rules: every rule with its kind, modality, cue and source line, filterable; conflicts side by side.
import type { StudioConflict, StudioRule, StudioRules } from "@botbin/protocol";
import { folderPath } from "../api";
import { editorLink, fill, h } from "../dom";
import { lines } from "../format";
import type { Ctx, View } from "../shell";
import { loading } from "../shell";

function ruleRow(rule: StudioRule): HTMLTableRowElement {
  const cue = rule.cues[0];
  const where = `${rule.path}:${lines(rule.startLine, rule.endLine)}`;
  return h(
    "tr",
    { "data-kind": rule.kind },
    h("td", {}, h("span", { class: `kind kind-${rule.kind}` }, rule.kind)),
    h("td", {}, cue ? cue.modality : "—"),
    h("td", {}, cue ? h("q", {}, cue.cue) : "—"),
    h("td", {}, editorLink(rule.editorUrl, where, `Open ${where} in the editor`)),
    h("td", { class: "rule-text" }, rule.text),
  );
}

function side(label: string, ref: StudioConflict["first"], url: string | null): HTMLElement {
  const where = `${ref.path}:L${ref.line + 1}`;
  return h(
    "div",
    { class: "side" },
    h("h4", {}, label, " ", h("span", { class: `kind kind-${ref.kind}` }, ref.kind), " ", ref.modality),
    h("blockquote", {}, ref.text),
    editorLink(url, where, `Open ${where} in the editor`),
  );
}

function conflictCard(c: StudioConflict): HTMLElement {
  return h(
    "li",
    { class: "conflict" },
    h("h3", {}, `On “${c.action}”`),
    h("div", { class: "sides" }, side("Says do", c.first, c.firstUrl), side("Says do not", c.second, c.secondUrl)),
  );
}

export const rulesView: View = (() => {
  let panel: HTMLElement;
  let ctx: Ctx;
  let body: HTMLElement;
  let rows: HTMLTableRowElement[] = [];
  const kind = h(
    "select",
    { id: "rules-kind" },
    h("option", { value: "" }, "all"),
    h("option", { value: "hard" }, "hard"),
    h("option", { value: "soft" }, "soft"),
  );
  const text = h("input", { type: "search", id: "rules-filter", autocomplete: "off" });

  function filter(): void {
    const want = text.value.trim().toLowerCase();
    for (const row of rows) {
      const fits =
        (!kind.value || row.dataset.kind === kind.value) && (!want || row.textContent!.toLowerCase().includes(want));
      row.hidden = !fits;
    }
  }

  function draw(result: StudioRules): void {
    rows = result.rules.map(ruleRow);
    const table = h(
      "table",
      { class: "rules" },
      h("caption", {}, `${result.rules.length} rules`),
      h(
        "thead",
        {},
        h("tr", {}, ...["Kind", "Modality", "Cue", "Source", "Rule"].map((name) => h("th", { scope: "col" }, name))),
      ),
      h("tbody", {}, ...rows),
    );
    const conflicts = result.conflicts.length
      ? h("ol", { class: "conflicts" }, ...result.conflicts.map(conflictCard))
      : h("p", { class: "empty" }, "No two rules contradict each other.");
    fill(
      body,
      ...result.warnings.map((w) => h("p", { class: "warning" }, w)),
      h(
        "section",
        { "aria-labelledby": "conflicts-title" },
        h("h2", { id: "conflicts-title" }, `Conflicts (${result.conflicts.length})`),
        conflicts,
      ),
      h("section", { "aria-labelledby": "rules-title" }, h("h2", { id: "rules-title" }, "Rules"), table),
    );
    filter();
  }

  return {
    id: "rules",
    title: "Rules",
    mount(p, c) {
      panel = p;
      ctx = c;
      body = h("div", { class: "results" });
      kind.addEventListener("change", filter);
      text.addEventListener("input", filter);
      const controls = h(
        "div",
        { class: "query-form", role: "group", "aria-label": "Filter rules" },
        h("label", { for: "rules-kind" }, "Kind"),
        kind,
        h("label", { for: "rules-filter" }, "Contains"),
        text,
      );
      fill(panel, controls, body);
    },
    show() {
      void loading(panel, body, async () => draw(await ctx.api.get<StudioRules>(folderPath(ctx.folder(), "rules"))));
    },
  };
})();
