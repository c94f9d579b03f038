// Recall Studio's page: a header (folder picker), the views as tabs (arrow keys move between them, the URL's
// #hash names the open one), a live region for announcements. Lifecycle only: each view is its own module.
import type { StudioInfo } from "@botbin/protocol";
import { Api, tokenOf } from "./api";
import { confirmDialog } from "./confirm";
import { fill, h } from "./dom";
import type { Ctx, View } from "./shell";
import { errorBox } from "./shell";
import { contextView } from "./views/context";
import { healthView } from "./views/health";
import { lifecycleView } from "./views/lifecycle";
import { rulesView } from "./views/rules";
import { searchView } from "./views/search";

const VIEWS: View[] = [searchView, contextView, rulesView, lifecycleView, healthView];

function tabs(app: HTMLElement, ctx: Ctx, picker: HTMLElement | null): void {
  const list = h("div", { role: "tablist", "aria-label": "Views", class: "tabs" });
  const main = h("main", {});
  const buttons: HTMLButtonElement[] = [];
  const panels: HTMLElement[] = [];
  for (const view of VIEWS) {
    const tab = h(
      "button",
      {
        role: "tab",
        id: `tab-${view.id}`,
        type: "button",
        "aria-controls": `panel-${view.id}`,
        "aria-selected": "false",
        tabindex: -1,
      },
      view.title,
    );
    const panel = h("section", {
      role: "tabpanel",
      id: `panel-${view.id}`,
      "aria-labelledby": `tab-${view.id}`,
      "data-view": view.id,
      tabindex: 0,
      hidden: true,
    });
    view.mount(panel, ctx);
    buttons.push(tab);
    panels.push(panel);
    list.append(tab);
    main.append(panel);
  }
  const select = (index: number, focus: boolean): void => {
    VIEWS.forEach((view, i) => {
      const on = i === index;
      buttons[i]!.setAttribute("aria-selected", String(on));
      buttons[i]!.tabIndex = on ? 0 : -1;
      panels[i]!.hidden = !on;
      if (on) {
        if (location.hash !== `#${view.id}`) history.replaceState(null, "", `#${view.id}`);
        view.show();
      }
    });
    if (focus) buttons[index]!.focus();
  };
  buttons.forEach((tab, i) => {
    tab.addEventListener("click", () => select(i, false));
    tab.addEventListener("keydown", (event) => {
      const n = VIEWS.length;
      const to = { ArrowRight: (i + 1) % n, ArrowLeft: (i - 1 + n) % n, Home: 0, End: n - 1 }[event.key];
      if (to !== undefined) {
        event.preventDefault();
        select(to, true);
      }
    });
  });
  picker?.addEventListener("change", () =>
    select(
      buttons.findIndex((b) => b.tabIndex === 0),
      false,
    ),
  );
  const wanted = (): number =>
    Math.max(
      0,
      VIEWS.findIndex((v) => `#${v.id}` === location.hash),
    );
  window.addEventListener("hashchange", () => select(wanted(), false));
  app.append(list, main);
  select(wanted(), false);
}

async function start(): Promise<void> {
  const app = document.getElementById("app") ?? document.body;
  const announcer = h("div", { role: "status", "aria-live": "polite", class: "visually-hidden", id: "announce" });
  const api = new Api(tokenOf(location.search));
  let info: StudioInfo;
  try {
    info = await api.get<StudioInfo>("/api/info");
  } catch (err) {
    fill(app, h("h1", {}, "Recall Studio"), errorBox(err));
    return;
  }
  const folder = h("select", { id: "folder" }, ...info.folders.map((f) => h("option", { value: f.id }, f.name)));
  const picker = info.folders.length > 1 ? folder : null;
  fill(
    app,
    h(
      "header",
      {},
      h("h1", {}, "Recall Studio"),
      picker ? h("label", { for: "folder" }, "Folder") : null,
      picker ??
        h("span", { class: "folder", title: info.folders[0]?.path ?? "" }, info.folders[0]?.name ?? "no folder"),
      info.readOnly ? h("span", { class: "badge" }, "read-only") : null,
    ),
    announcer,
  );
  const ctx: Ctx = {
    api,
    info,
    folder: () => Number(folder.value || 0),
    announce: (message) => {
      announcer.textContent = message;
    },
    confirm: confirmDialog,
  };
  tabs(app, ctx, picker);
}

void start();
