/** The right-sidebar pane: the memories related to the cursor's paragraph (see core/relatedTracker.ts). */
import { ItemView, type Workspace, type WorkspaceLeaf } from "obsidian";
import type { Hit } from "@botbin/protocol";
import { hitText } from "../core/hitText";
import type { RelatedState } from "../core/relatedTracker";

export const RELATED_VIEW_TYPE = "botbin-related";

export interface RelatedViewDeps {
  /** The tracker's current state (drawn when the pane opens). */
  current(): RelatedState;
  /** The pane opened: time to ask for the cursor's paragraph. */
  opened(): void;
  open(hit: Hit): unknown;
}

export class RelatedView extends ItemView {
  constructor(
    leaf: WorkspaceLeaf,
    private readonly deps: RelatedViewDeps,
  ) {
    super(leaf);
  }

  getViewType(): string {
    return RELATED_VIEW_TYPE;
  }

  getDisplayText(): string {
    return "Related memories";
  }

  override getIcon(): string {
    return "brain-circuit";
  }

  override async onOpen(): Promise<void> {
    this.render(this.deps.current());
    this.deps.opened();
  }

  render(state: RelatedState): void {
    const root = this.contentEl;
    root.empty();
    root.addClass("botbin-related");
    const say = (text: string): void => void root.createDiv({ text, cls: "botbin-message" });
    switch (state.kind) {
      case "noNote":
        return say("Open a note to see related memories.");
      case "loading":
        return say("Looking for related memories…");
      case "empty":
        return say(
          state.indexing
            ? "No related memories yet (botbin is still indexing)."
            : "No related memories for this paragraph.",
        );
      case "error":
        return say(`botbin: ${state.message}`);
      case "hits":
        if (state.caveat) root.createDiv({ text: state.caveat, cls: "botbin-caveat" });
        for (const hit of state.hits) this.renderHit(root, hit);
    }
  }

  private renderHit(root: HTMLElement, hit: Hit): void {
    const text = hitText(hit);
    const item = root.createDiv({ cls: "botbin-hit tree-item-self is-clickable" });
    item.createDiv({ text: text.title, cls: "botbin-hit-title" });
    item.createEl("small", { text: text.location, cls: "botbin-hit-location" });
    item.createDiv({ text: text.snippet, cls: "botbin-hit-snippet" });
    item.addEventListener("click", () => void this.deps.open(hit));
  }
}

/** Opens the pane in the right sidebar (or shows the one already open). */
export async function revealRelatedPane(workspace: Workspace): Promise<void> {
  const leaf = workspace.getLeavesOfType(RELATED_VIEW_TYPE)[0] ?? workspace.getRightLeaf(false);
  if (!leaf) return;
  await leaf.setViewState({ type: RELATED_VIEW_TYPE, active: true });
  await workspace.revealLeaf(leaf);
}

/** True while at least one related pane is open. */
export function relatedPaneOpen(workspace: Workspace): boolean {
  return workspace.getLeavesOfType(RELATED_VIEW_TYPE).length > 0;
}

/** Draws the tracker's state in every open related pane. */
export function renderRelatedPanes(workspace: Workspace, state: RelatedState): void {
  for (const leaf of workspace.getLeavesOfType(RELATED_VIEW_TYPE)) {
    if (leaf.view instanceof RelatedView) leaf.view.render(state);
  }
}
