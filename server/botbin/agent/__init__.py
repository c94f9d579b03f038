"""Agent memory: recency-ranked recall, token-budgeted context assembly with tier laws, and remember."""
