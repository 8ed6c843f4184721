"""The `paged_attention` op folder (kernels.py, op.py, reference.py): decode attention over a
paged KV cache in vLLM's flash layout; the op function is `ktile.ops.paged_attention_decode`."""
