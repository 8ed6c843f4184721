"""Elementwise kernels' references."""
