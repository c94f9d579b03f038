"""Memo lifecycle (DESIGN section 8, BonsaiCore): episodic memos that strengthen when retrieved and fade when
not, consolidated into durable roots, archived (never deleted) when they fade away."""
