"""The language server (``botbin lsp``): the only package that imports pygls."""
