"""Team memory on PostgreSQL + pgvector: the schema, publishing notes into a namespace, and hybrid search
(HNSW cosine + full-text) fused the way the embedded index fuses (docs/postgres.md)."""
