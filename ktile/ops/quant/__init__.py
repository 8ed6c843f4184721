"""Quantisation: int8 and fp8 e4m3, per token and per tensor, and dequantisation."""
