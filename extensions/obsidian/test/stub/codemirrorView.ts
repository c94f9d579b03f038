// Stand-in for @codemirror/view (provided by Obsidian at run time): the update listener the plugin adds.
export interface FakeUpdate {
  selectionSet: boolean;
  docChanged: boolean;
}

export const EditorView = {
  updateListener: {
    of(listener: (update: FakeUpdate) => void): { listener: (update: FakeUpdate) => void } {
      return { listener };
    },
  },
};
