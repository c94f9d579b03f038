"""The wire contract: every payload botbin sends or takes over LSP (custom ``botbin/*`` methods, commands) and
MCP (tool results), typed once with pydantic. ``extensions/protocol/src/generated.ts`` is generated from it
(``scripts/gen_protocol.py``); a test fails when the two drift."""
