// Context preview: what get_context gives an agent for a task, tier by tier, as a bar of the token budget, with what
// each tier left out and why. Nothing is counted as retrieved.
import type { ContextItem, ContextResult, ContextTier, CutItem } from "@botbin/protocol";
import { DEFAULT_BUDGET_TOKENS } from "@botbin/protocol";
import { folderPath } from "../api";
import { tokenSegments } from "../charts";
import { fill, h } from "../dom";
import { CUT_REASONS, place, TIER_TITLES } from "../format";
import type { Ctx, View } from "../shell";
import { loading, setState } from "../shell";

function budgetBar(result: ContextResult): HTMLElement {
  const label = result.tiers
    .filter((t) => t.tokens)
    .map((t) => `${t.name} ${t.tokens}`)
    .join(", ");
  const bar = h("div", {
    class: "bar token-bar",
    role: "img",
    "aria-label": `${result.usedTokens} of ${result.budgetTokens} tokens used: ${label || "nothing"}`,
  });
  for (const s of tokenSegments(result.tiers, result.budgetTokens)) {
    const piece = h("span", { class: `seg tier-${s.name}`, title: `${s.name}` });
    piece.style.left = `${s.start}%`;
    piece.style.width = `${s.width}%`;
    bar.append(piece);
  }
  return bar;
}

function item(i: ContextItem | CutItem): HTMLElement {
  const reason = "reason" in i ? h("span", { class: "reason" }, CUT_REASONS[i.reason] ?? i.reason) : null;
  return h(
    "li",
    { class: "context-item" },
    h("span", { class: "path" }, place(i.path, i.startLine, i.endLine)),
    reason,
    h("pre", { class: "text" }, i.text),
  );
}

function tier(t: ContextTier, partial: boolean): HTMLElement {
  const title = `Tier ${t.tier} · ${TIER_TITLES[t.name] ?? t.name}`;
  const id = `tier-${t.name}`;
  return h(
    "section",
    { class: `tier tier-box-${t.name}`, "aria-labelledby": id, "data-tier": t.name },
    h(
      "h3",
      { id },
      h("span", { class: `swatch tier-${t.name}` }),
      title,
      h("span", { class: "tokens" }, ` — ${t.tokens} tokens, ${t.items.length} kept, ${t.cut.length} left out`),
    ),
    partial ? h("p", { class: "warning" }, "Still indexing: this tier may miss notes not embedded yet.") : null,
    t.items.length
      ? h("ol", { class: "kept" }, ...t.items.map(item))
      : h("p", { class: "empty" }, "Nothing in this tier."),
    t.cut.length
      ? h("details", { class: "cut" }, h("summary", {}, `Left out (${t.cut.length})`), h("ol", {}, ...t.cut.map(item)))
      : null,
  );
}

export const contextView: View = (() => {
  let panel: HTMLElement;
  let ctx: Ctx;
  let results: HTMLElement;
  const task = h("textarea", { id: "context-task", rows: 2 });
  const budget = h("input", { type: "number", id: "context-budget", min: 1, value: DEFAULT_BUDGET_TOKENS });

  async function run(): Promise<void> {
    await loading(panel, results, async () => {
      const body = { query: task.value, budgetTokens: Number(budget.value) || DEFAULT_BUDGET_TOKENS };
      const result = await ctx.api.post<ContextResult>(folderPath(ctx.folder(), "context"), body);
      fill(
        results,
        h("p", { class: "summary", role: "status" }, `${result.usedTokens} of ${result.budgetTokens} tokens used`),
        budgetBar(result),
        ...result.tiers.map((t) => tier(t, result.partialTiers.includes(t.name))),
        h(
          "details",
          { class: "rendered" },
          h("summary", {}, "The block as the agent gets it"),
          h("pre", {}, result.text),
        ),
      );
      ctx.announce(`context uses ${result.usedTokens} of ${result.budgetTokens} tokens`);
    });
  }

  return {
    id: "context",
    title: "Context preview",
    mount(p, c) {
      panel = p;
      ctx = c;
      results = h("div", { class: "results", "aria-live": "polite" });
      const form = h(
        "form",
        { class: "query-form", "aria-label": "Preview an agent's context" },
        h("label", { for: "context-task" }, "Task"),
        task,
        h("label", { for: "context-budget" }, "Budget (tokens)"),
        budget,
        h("button", { type: "submit" }, "Preview"),
      );
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        void run();
      });
      fill(panel, form, results);
    },
    show() {
      if (!panel.dataset.state) setState(panel, "ready");
    },
  };
})();
