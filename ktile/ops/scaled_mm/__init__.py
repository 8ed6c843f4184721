"""fp8 (e4m3) GEMM with scales: `ktile.ops.scaled_mm` (op.py), torch._scaled_mm's semantics."""
