"""Gated activations: silu_and_mul and gelu_and_mul (vLLM's convention)."""
