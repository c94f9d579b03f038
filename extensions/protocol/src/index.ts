/** @botbin/protocol: what the TypeScript front ends and `botbin lsp` agree on, all generated from the Python server. */
export * from "./names";
export * from "./values";
export type * from "./payloads";
export { HOST_PROTOCOL } from "./generated";
