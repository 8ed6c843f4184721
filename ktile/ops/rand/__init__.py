"""`rand`: Triton-compatible Philox-4x32-10 random numbers (see reference.py)."""
