"""Workspace sync: scan tracked notes, diff by content hash, write AIF-BIN files and the state file."""
