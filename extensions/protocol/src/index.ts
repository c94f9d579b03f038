/** @botbin/protocol: what the TypeScript front ends and `botbin lsp` agree on. */
export * from "./names";
export type * from "./payloads";
export { HOST_PROTOCOL } from "./generated";
