/** Obsidian events into the session and the related pane: vault changes, the active note and its cursor. */
import { EditorView } from "@codemirror/view";
import { MarkdownView, type Plugin, TFile, type TAbstractFile } from "obsidian";
import { type EditorPos, toPosition } from "../core/places";
import type { CursorPlace } from "../core/relatedTracker";
import type { VaultSync } from "../core/vaultSync";

/**
 * Forwards create, modify, rename and delete of notes. Call it once the layout is ready: before that,
 * Obsidian reports every file of the vault as created while it loads.
 */
export function forwardVaultEvents(plugin: Plugin, sync: VaultSync): void {
  const { vault } = plugin.app;
  const isFile = (file: TAbstractFile): file is TFile => file instanceof TFile;
  plugin.registerEvent(vault.on("create", (file) => isFile(file) && sync.created(file.path)));
  plugin.registerEvent(vault.on("modify", (file) => isFile(file) && sync.modified(file.path)));
  plugin.registerEvent(vault.on("delete", (file) => isFile(file) && sync.deleted(file.path)));
  plugin.registerEvent(vault.on("rename", (file, oldPath) => isFile(file) && sync.renamed(file.path, oldPath)));
}

/**
 * Calls `onPlace` when the active note or its cursor changes. Focus moving to a side pane keeps the last
 * note (so clicking in the related pane does not empty it); closing the last note clears it. The cursor is
 * read from CodeMirror's update listener, which runs on selection changes and costs nothing while typing
 * beyond reading the cursor (the tracker debounces).
 */
export function followCursor(
  plugin: Plugin,
  uriOf: (path: string) => string,
  onPlace: (place: CursorPlace | undefined) => void,
): void {
  const { workspace } = plugin.app;
  const emit = (): void => {
    const view = workspace.getActiveViewOfType(MarkdownView);
    if (!view?.file) return;
    onPlace(placeOf(view.file.path, view.editor.getCursor(), uriOf));
  };
  plugin.registerEvent(workspace.on("active-leaf-change", emit));
  plugin.registerEvent(
    workspace.on("file-open", (file) => (file && file.extension === "md" ? emit() : onPlace(undefined))),
  );
  plugin.registerEditorExtension(
    EditorView.updateListener.of((update) => {
      if (update.selectionSet || update.docChanged) emit();
    }),
  );
  workspace.onLayoutReady(emit);
}

export function placeOf(path: string, cursor: EditorPos, uriOf: (path: string) => string): CursorPlace {
  return { path, uri: uriOf(path), position: toPosition(cursor) };
}
