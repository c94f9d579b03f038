"""Conversation memory (DESIGN section 8, FileRAG): chat turns distilled into readable per-user soul files.

Layers: ``turns`` (JSONL -> Turn), ``gate`` (admission score of a turn, pure), ``distill`` (a buffer of turns ->
one markdown block, pure), ``soul`` (read and append the soul file), ``observer`` (the stateful TurnObserver
that ``botbin ingest`` and the MCP tool ``observe_turn`` drive).
"""
