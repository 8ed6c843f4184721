"""layernorm."""
