"""Crash-safety and concurrency tests: `botbin sync` killed with SIGKILL, and several writers on one workspace."""
