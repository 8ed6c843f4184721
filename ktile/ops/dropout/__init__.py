"""`dropout`: Triton's low-memory (seeded) dropout (see reference.py)."""
