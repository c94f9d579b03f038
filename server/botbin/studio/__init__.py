"""Recall Studio (``botbin studio``): a local web app that shows what the memory holds, why a hit ranked and what
an agent will get. Another adapter, like cli/, lsp/ and mcp.py: each request is checked (security.py), handed to
the service (views.py), and its answer converted to the studio's wire payloads (botbin/wire/studio.py). The page
is the bundle built from extensions/studio (static/); serve.py binds it to 127.0.0.1 only."""
