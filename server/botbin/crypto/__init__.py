"""Encryption at rest (DESIGN section 4): AES-256-GCM chunk blocks under keys derived with Argon2id."""
