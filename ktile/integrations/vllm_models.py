"""Tiny models for engine tests, built on this machine from random weights (no download): a
byte-level BPE tokenizer trained on a few sentences with `tokenizers`, and a 2-layer Qwen3 (or
Qwen3-MoE) checkpoint written with transformers' `save_pretrained`; the AWQ kind quantises the
tiny Qwen3's decoder projections into AutoAWQ's GEMM format (`quantize_awq`).

`python -m ktile.integrations.vllm_models DIR [--moe | --awq]` writes one; `tiny_model(kind)` returns a
cached directory (under KTILE_CACHE_DIR, else ~/.cache/ktile), built once per kind.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

KINDS = ("qwen3", "qwen3-moe", "qwen3-awq")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CORPUS = ["The quick brown fox jumps over the lazy dog.",
          "Hello world, this is a tiny tokenizer for engine tests.",
          "Kernels written as tiles run inside inference engines."] * 40
# Shapes: every routed op's CPU interpreter call stays small (hidden 256, 4 query heads and 2
# KV heads of 64, intermediate 512), and widths are multiples of 16 (ktile's row-tile routes).
SHAPE = dict(vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, head_dim=64,
             max_position_embeddings=1024, tie_word_embeddings=True)
MOE = dict(moe_intermediate_size=128, num_experts=8, num_experts_per_tok=2,
           decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=True)


def build_tokenizer(out: Path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=SPECIALS[0],
                                   pad_token=SPECIALS[0])
    fast.save_pretrained(out)
    return fast


# AWQ: 4-bit codes, zero points, groups of 128 rows of K (ktile.ops.awq_gemm's group size);
# the config AutoAWQ writes and vLLM's `awq` method reads
AWQ_GROUP = 128
AWQ_CONFIG = {"quant_method": "awq", "bits": 4, "group_size": AWQ_GROUP, "zero_point": True,
              "version": "gemm"}


def quantize_awq(weight, group: int = AWQ_GROUP):
    """A linear layer's weight [N, K] (torch) → (qweight int32 [K, N/8], qzeros int32
    [K/group, N/8], scales fp16 [K/group, N]) in AutoAWQ's GEMM layout: per group of `group`
    rows of w = weight.T and per column, the range [min, max] mapped onto codes 0..15
    (scale (max − min) / 15, zero round(−min / scale)); packed by ktile's AWQ packer."""
    import numpy as np
    import torch
    from ..ops.awq.reference import pack
    w = weight.detach().double().t().numpy()
    k, n = w.shape
    groups = w.reshape(k // group, group, n)
    low, high = groups.min(axis=1), groups.max(axis=1)
    scale = np.maximum((high - low) / 15, 1e-8).astype(np.float16).astype(np.float64)
    zero = np.clip(np.round(-low / scale), 0, 15)
    codes = np.clip(np.round(groups / scale[:, None] + zero[:, None]), 0, 15).reshape(k, n)
    return tuple(torch.from_numpy(np.ascontiguousarray(a))
                 for a in (pack(codes), pack(zero), scale.astype(np.float16)))


def write_awq(out: Path) -> None:
    """Rewrite the bf16 checkpoint in `out` as AWQ: every decoder `*_proj.weight` becomes
    qweight / qzeros / scales (the embeddings, norms and tied head stay bf16)."""
    import json
    from safetensors.torch import load_file, save_file
    path = out / "model.safetensors"
    tensors, quantised = load_file(path), {}
    for name, tensor in tensors.items():
        if ".layers." in name and name.endswith("_proj.weight"):
            base = name.removesuffix(".weight")
            qweight, qzeros, scales = quantize_awq(tensor)
            quantised |= {f"{base}.qweight": qweight, f"{base}.qzeros": qzeros,
                          f"{base}.scales": scales}
        else:
            quantised[name] = tensor
    save_file(quantised, path, metadata={"format": "pt"})
    config = json.loads((out / "config.json").read_text())
    config["quantization_config"] = AWQ_CONFIG
    (out / "config.json").write_text(json.dumps(config, indent=2))


def build(out: str | os.PathLike, kind: str = "qwen3", seed: int = 0) -> Path:
    """Write a tiny `kind` checkpoint (bf16, random weights, seeded) and its tokenizer."""
    import torch
    if kind not in KINDS:
        from ..errors import InputError
        raise InputError(f"tiny model: 'kind' is {kind!r}; it must be one of {KINDS}",
                         hint="pass kind='qwen3', 'qwen3-moe' or 'qwen3-awq'")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    eos = build_tokenizer(out).eos_token_id
    ids = dict(eos_token_id=eos, bos_token_id=eos, pad_token_id=eos)
    if kind != "qwen3-moe":
        from transformers import Qwen3Config as Config, Qwen3ForCausalLM as Model
        config = Config(**SHAPE, **ids)
    else:
        from transformers import Qwen3MoeConfig as Config, Qwen3MoeForCausalLM as Model
        config = Config(**SHAPE, **MOE, **ids)
    torch.manual_seed(seed)
    Model(config).to(torch.bfloat16).save_pretrained(out)
    if kind == "qwen3-awq":
        write_awq(out)
    return out


def tiny_model(kind: str = "qwen3") -> Path:
    """A cached tiny checkpoint of `kind`, built on first use (in a temporary folder renamed
    into place, so a concurrent or interrupted build never leaves half a checkpoint)."""
    from ..config import CACHE_DIR
    root = Path(CACHE_DIR.get() or Path.home() / ".cache" / "ktile")
    out = root / "tiny-models" / kind
    if (out / "config.json").exists():
        return out
    tmp = out.with_name(f"{kind}.tmp{os.getpid()}")
    build(tmp, kind)
    try:
        tmp.rename(out)
    except OSError:               # another process put it there first
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    return out


if __name__ == "__main__":
    build(sys.argv[1], "qwen3-moe" if "--moe" in sys.argv
          else "qwen3-awq" if "--awq" in sys.argv else "qwen3")
