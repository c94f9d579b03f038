/**
 * Ids of the extension's palette commands, as contributed in package.json. They must differ from the
 * server's own commands (botbin.sync, botbin.reindex): the language client registers those ids itself.
 */
export const COMMAND_IDS = {
  search: "botbin.searchMemories",
  sync: "botbin.syncNow",
  reindex: "botbin.reindexNotes",
  status: "botbin.showStatus",
  related: "botbin.showRelatedMemories",
  restart: "botbin.restartServer",
  log: "botbin.showLog",
  setPassphrase: "botbin.setPassphrase",
  forgetPassphrase: "botbin.forgetPassphrase",
} as const;

export type CommandId = (typeof COMMAND_IDS)[keyof typeof COMMAND_IDS];
