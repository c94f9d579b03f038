/**
 * Shapes of botbin's custom requests, commands and MCP tool results as JSON on the wire (camelCase). They are
 * generated from the one typed contract, server/botbin/wire (pydantic), into ./generated.ts by
 * `python scripts/gen_protocol.py`; tests/test_wire_contract.py fails when the two drift. Lines are 0-based; a
 * range's end is exclusive; characters are UTF-16 code units unless the client negotiated another position
 * encoding.
 */
export type * from "./generated";
