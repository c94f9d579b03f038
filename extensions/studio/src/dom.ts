// The one way the studio makes DOM: elements whose text is set as text (textContent), never parsed as HTML, so a
// note's <script>, onerror= or javascript: link is shown, not run. No innerHTML, outerHTML, insertAdjacentHTML or
// document.write anywhere (test/dom.test.ts checks the sources).

export type Child = Node | string | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | null | undefined>;

const SVG = "http://www.w3.org/2000/svg";

function apply(el: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (/^on/i.test(name) || name === "style" || name === "srcdoc") {
      throw new Error(`refusing attribute ${name}`); // handlers go through addEventListener, styles through CSSOM
    }
    el.setAttribute(name, value === true ? "" : String(value));
  }
}

function append(el: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** An HTML element with attributes and children (strings become text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** An SVG element with attributes and children. */
export function svg(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG, tag) as SVGElement;
  apply(el, attrs);
  append(el, children);
  return el;
}

/** Replace every child of ``el`` with ``children``. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** Schemes a link may use: the editors' own (VS Code, Obsidian); anything else (javascript:, data:, http:) is not a link. */
const LINK_SCHEMES = ["vscode://", "obsidian://"];

/** ``url`` when it is an editor link the studio may put in an href, else null. */
export function safeEditorUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  return LINK_SCHEMES.some((scheme) => url.startsWith(scheme)) && !/[\s"'<>]/.test(url) ? url : null;
}

/** A link to ``url`` in the editor when it is one, else plain text. */
export function editorLink(url: string | null | undefined, text: string, label?: string): HTMLElement {
  const safe = safeEditorUrl(url);
  if (safe === null) return h("span", { class: "path" }, text);
  return h("a", { href: safe, class: "path", title: label ?? `Open ${text} in the editor` }, text);
}
