"""The kernel library: one folder per op, each with its reference semantics."""
