// Search: the hits of a query with each one's score taken apart (a bar of its parts and a table), the snippet with
// its lines, and a link that opens the note in the editor. Nothing is counted as retrieved.
import type { ChunkKind, SearchRequest, StudioHit, StudioSearchResult } from "@botbin/protocol";
import { folderPath } from "../api";
import { scoreSegments } from "../charts";
import { editorLink, fill, h } from "../dom";
import { lines, PART_NAMES, place, points, score } from "../format";
import type { Ctx, View } from "../shell";
import { loading, setState } from "../shell";

export function scoreBar(hit: StudioHit): HTMLElement {
  const { segments, loss } = scoreSegments(hit.parts);
  const label = hit.parts.map((p) => `${PART_NAMES[p.name] ?? p.name} ${points(p.points)}`).join(", ");
  const bar = h("div", { class: "bar score-bar", role: "img", "aria-label": `score ${score(hit.score)}: ${label}` });
  for (const s of segments) {
    const piece = h("span", { class: `seg part-${s.name}`, title: `${PART_NAMES[s.name] ?? s.name}` });
    piece.style.left = `${s.start}%`;
    piece.style.width = `${s.width}%`;
    bar.append(piece);
  }
  if (loss) {
    const piece = h("span", { class: "seg part-loss", title: "taken away (decay)" });
    piece.style.left = `${loss.start}%`;
    piece.style.width = `${loss.width}%`;
    bar.append(piece);
  }
  return bar;
}

function partsTable(hit: StudioHit): HTMLElement {
  const rows = hit.parts.map((p) =>
    h(
      "tr",
      {},
      h("th", { scope: "row" }, PART_NAMES[p.name] ?? p.name),
      h("td", {}, score(p.value)),
      h("td", {}, points(p.points)),
    ),
  );
  return h(
    "details",
    { class: "parts" },
    h("summary", {}, "Score parts"),
    h(
      "table",
      {},
      h("caption", { class: "visually-hidden" }, `How the score ${score(hit.score)} was made`),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "term"),
          h("th", { scope: "col" }, "value"),
          h("th", { scope: "col" }, "points"),
        ),
      ),
      h("tbody", {}, ...rows),
    ),
  );
}

function hitItem(hit: StudioHit, rank: number): HTMLElement {
  const where = place(hit.path, hit.startLine, hit.endLine);
  return h(
    "li",
    { class: "hit", "data-path": hit.path },
    h(
      "div",
      { class: "hit-head" },
      h("span", { class: "rank" }, `${rank}.`),
      h("span", { class: "title" }, hit.title),
      h("span", { class: `kind kind-${hit.kind}` }, hit.kind),
      editorLink(hit.editorUrl, where, `Open ${where} in the editor`),
    ),
    hit.headingPath.length ? h("div", { class: "headings" }, hit.headingPath.join(" › ")) : null,
    h(
      "blockquote",
      { class: "snippet" },
      h("span", { class: "lines" }, lines(hit.snippetStartLine, hit.snippetEndLine)),
      h("span", { class: "text" }, hit.snippet),
    ),
    h("div", { class: "score-row" }, h("span", { class: "score" }, score(hit.score)), scoreBar(hit)),
    partsTable(hit),
  );
}

function summary(result: StudioSearchResult): HTMLElement {
  const bits = [`${result.hits.length} hits in ${result.elapsedMs.toFixed(0)} ms`];
  if (result.hidden) bits.push(`${result.hidden} under the relevance floor hidden`);
  if (result.degraded) bits.push("model unavailable: keywords only");
  if (result.indexing) bits.push("still indexing: some notes may be missing");
  if (result.stale) bits.push("notes deleted since the last sync left out");
  return h("p", { class: "summary", role: "status" }, bits.join(" · "));
}

const LEGEND = ["cosine", "keywords", "note", "neighbours", "bound", "loss"];

export const searchView: View = (() => {
  let panel: HTMLElement;
  let ctx: Ctx;
  let results: HTMLElement;
  let shownFolder = -1;
  const query = h("input", { type: "search", id: "search-query", name: "query", required: true, autocomplete: "off" });
  const k = h("input", { type: "number", id: "search-k", min: 1, max: 100, value: 10 });
  const kind = h(
    "select",
    { id: "search-kind" },
    h("option", { value: "" }, "any"),
    h("option", { value: "hard" }, "hard rules"),
    h("option", { value: "soft" }, "soft rules"),
    h("option", { value: "lore" }, "lore"),
  );
  const glob = h("input", { type: "text", id: "search-path", placeholder: "memory/**", autocomplete: "off" });

  async function run(): Promise<void> {
    const params: SearchRequest = { query: query.value, k: Number(k.value) || 10 };
    if (kind.value || glob.value.trim()) {
      params.filters = { kind: (kind.value || null) as ChunkKind | null, pathGlob: glob.value.trim() || null };
    }
    await loading(panel, results, async () => {
      const result = await ctx.api.post<StudioSearchResult>(folderPath(ctx.folder(), "search"), params);
      fill(results, summary(result), h("ol", { class: "hits" }, ...result.hits.map((hit, i) => hitItem(hit, i + 1))));
      ctx.announce(`${result.hits.length} hits`);
    });
  }

  return {
    id: "search",
    title: "Search",
    mount(p, c) {
      panel = p;
      ctx = c;
      results = h("div", { class: "results", "aria-live": "polite" });
      const form = h(
        "form",
        { class: "query-form", role: "search", "aria-label": "Search memories" },
        h("label", { for: "search-query" }, "Query"),
        query,
        h("label", { for: "search-k" }, "Hits"),
        k,
        h("label", { for: "search-kind" }, "Kind"),
        kind,
        h("label", { for: "search-path" }, "Path"),
        glob,
        h("button", { type: "submit" }, "Search"),
      );
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        if (query.value.trim()) void run();
      });
      const legend = h(
        "ul",
        { class: "legend", "aria-label": "Score bar colours" },
        ...LEGEND.map((name) => h("li", {}, h("span", { class: `swatch part-${name}` }), PART_NAMES[name] ?? "decay")),
      );
      fill(panel, form, legend, results);
    },
    show() {
      if (shownFolder !== ctx.folder()) results.replaceChildren(); // another folder's hits would mislead
      shownFolder = ctx.folder();
      if (!panel.dataset.state) setState(panel, "ready"); // the form is the first paint; results come on submit
    },
  };
})();
