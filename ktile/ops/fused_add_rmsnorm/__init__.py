"""Fused add + RMSNorm (a transformer block's pre-norm): h = x + residual, o = RMSNorm(h)."""
