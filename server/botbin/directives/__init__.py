"""Directives: the deontic lexer, the hard/soft/lore partition of notes, and conflicts between rules."""
