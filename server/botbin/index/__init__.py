"""In-memory search index: one float32 embedding matrix + BM25, patched per note, hybrid ranking."""
