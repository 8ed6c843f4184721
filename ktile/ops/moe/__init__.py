"""Mixture-of-experts: vLLM's fused-MoE layout (`moe_align_block_size`), the grouped GEMM over
it (`moe_grouped_gemm`) and the chained expert MLP (`fused_moe`); docs/ops.md, "MoE"."""
