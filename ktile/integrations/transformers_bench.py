"""The measurements behind `python -m ktile.integrations.ab_transformers`: a Qwen3 model with
random weights built from its config (no download), the logits check of the patched model
against stock, and the timed arms (decode per token with StaticCache and a compiled step,
prefill eager), each arm its own copy of the model so both stay compiled side by side.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import torch

# Qwen3-8B's shapes (its config.json) and a tiny model for CPU runs.
SIZES = {
    "8b": dict(vocab_size=151936, hidden_size=4096, intermediate_size=12288,
               num_hidden_layers=36, num_attention_heads=32, num_key_value_heads=8,
               head_dim=128, max_position_embeddings=40960, rms_norm_eps=1e-6,
               rope_parameters={"rope_type": "default", "rope_theta": 1e6},
               tie_word_embeddings=False),
    "tiny": dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=2, num_key_value_heads=1, head_dim=32,
                 max_position_embeddings=512, rms_norm_eps=1e-6, tie_word_embeddings=False),
}
WARM_STEPS = 3          # compiled decode steps before timing: trace, warm-up, CUDA-graph record
LOGITS_RTOL = 0.05      # the check: max |patched - stock| <= LOGITS_RTOL * max |stock|


def build(size: str, layers: int | None, device: str, seed: int = 0):
    """Qwen3ForCausalLM in bf16 on `device`, random weights (transformers' own init)."""
    from transformers import Qwen3Config, Qwen3ForCausalLM
    shape = dict(SIZES[size])
    if layers:
        shape["num_hidden_layers"] = layers
    config = Qwen3Config(**shape, attn_implementation="sdpa")
    torch.manual_seed(seed)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(device):
            model = Qwen3ForCausalLM(config)
    finally:
        torch.set_default_dtype(default)
    return model.eval()


def twin(model):
    """A second model with the same weights (the patched arm)."""
    return copy.deepcopy(model)


def _cache(model, length: int):
    from transformers import StaticCache
    return StaticCache(config=model.config, max_cache_len=length)


@torch.no_grad()
def check(stock, patched, prompt: torch.Tensor, steps: int) -> dict:
    """Teacher-forced greedy decoding, eager, StaticCache: both models are fed stock's tokens;
    tokens_identical when patched's argmax equals stock's at the prefill and every step."""
    length = prompt.shape[1] + steps + 1
    caches = (_cache(stock, length), _cache(patched, length))
    logits = [m(prompt, past_key_values=c, use_cache=True).logits[:, -1].float()
              for m, c in zip((stock, patched), caches)]
    diff, scale, agree, total = 0.0, 0.0, 0, 0
    for step in range(steps + 1):
        want, got = logits
        diff = max(diff, float((got - want).abs().max()))
        scale = max(scale, float(want.abs().max()))
        agree += int((got.argmax(-1) == want.argmax(-1)).sum())
        total += want.shape[0]
        if step == steps:
            break
        token = want.argmax(-1, keepdim=True)
        logits = [m(token, past_key_values=c, use_cache=True).logits[:, -1].float()
                  for m, c in zip((stock, patched), caches)]
    return {"tokens_identical": agree == total, "top1_agreement": agree / total,
            "logits_max_diff": diff, "logits_scale": scale,
            "logits_ok": diff <= LOGITS_RTOL * scale, "steps": steps}


class Clock:
    """Elapsed milliseconds of a region: CUDA events on a GPU, else the host clock."""

    def __init__(self, device: str):
        self.cuda = device.startswith("cuda")

    def __enter__(self):
        if self.cuda:
            self.start, self.end = torch.cuda.Event(True), torch.cuda.Event(True)
            self.start.record()
        else:
            self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.cuda:
            self.end.record()
            self.end.synchronize()
            self.ms = self.start.elapsed_time(self.end)
        else:
            self.ms = (time.perf_counter() - self.t0) * 1e3


@dataclass
class Arm:
    """One model (stock or patched) and, per batch size, its StaticCache, prompt and compiled
    decode step; the cache is reset in place between rounds (the CUDA graphs hold its
    addresses)."""
    name: str
    model: object
    device: str
    compile: str
    decode: dict = field(default_factory=dict)     # batch -> (cache, prompt, step)
    times: dict = field(default_factory=dict)      # measurement -> [ms, ...]

    def _compiled(self, cache):
        """The decode step, compiled: fullgraph, static shapes (one graph per batch size)."""
        model = self.model

        def step(token):
            return model(input_ids=token, past_key_values=cache, use_cache=True).logits[:, -1]
        if self.compile == "none":
            return step
        if self.compile in ("aot_eager", "eager"):
            return torch.compile(step, backend=self.compile, fullgraph=True, dynamic=False)
        return torch.compile(step, mode=self.compile, fullgraph=True, dynamic=False)

    @torch.no_grad()
    def prepare(self, batch: int, context: int, gen: int, vocab: int) -> None:
        """Build the cache and compile the step for `batch` (prefill, then WARM_STEPS steps)."""
        cache = _cache(self.model, context + WARM_STEPS + gen + 8)
        generator = torch.Generator().manual_seed(batch)
        prompt = torch.randint(0, vocab, (batch, context), generator=generator).to(self.device)
        self.decode[batch] = (cache, prompt, self._compiled(cache))
        self._run(batch, WARM_STEPS)

    def _run(self, batch: int, steps: int, clock: Clock | None = None):
        cache, prompt, step = self.decode[batch]
        cache.reset()
        token = self.model(prompt, past_key_values=cache, use_cache=True,
                           logits_to_keep=1).logits[:, -1].argmax(-1, keepdim=True)
        if clock is None:
            clock = Clock(self.device)
        with clock:
            for _ in range(steps):
                if self.compile == "reduce-overhead":
                    torch.compiler.cudagraph_mark_step_begin()
                token = step(token).argmax(-1, keepdim=True)
        return clock.ms

    @torch.no_grad()
    def time_decode(self, batch: int, gen: int) -> None:
        self.times.setdefault(f"decode_b{batch}", []).append(self._run(batch, gen) / gen)

    @torch.no_grad()
    def time_prefill(self, tokens: int, vocab: int) -> None:
        """One eager prefill of `tokens` tokens (batch 1) into a reset StaticCache; logits of the
        last position only (as generation computes them). Also its host time (`_host`): from
        the call to its return, before the GPU is waited for; near the whole time, the arm is
        bound by Python, not by its kernels."""
        key = f"prefill_{tokens}"
        if key not in self.decode:
            generator = torch.Generator().manual_seed(tokens)
            prompt = torch.randint(0, vocab, (1, tokens), generator=generator).to(self.device)
            self.decode[key] = (_cache(self.model, tokens + 8), prompt, None)
        cache, prompt, _ = self.decode[key]
        if len(self.times.get(key, ())) == 0:            # warm-up: ktile's first calls build
            self.model(prompt, past_key_values=cache, use_cache=True, logits_to_keep=1)
        cache.reset()
        with Clock(self.device) as clock:
            t0 = time.perf_counter()
            self.model(prompt, past_key_values=cache, use_cache=True, logits_to_keep=1)
            host = (time.perf_counter() - t0) * 1e3
        self.times.setdefault(key, []).append(clock.ms)
        self.times.setdefault(f"{key}_host", []).append(host)


def best(arm: Arm, key: str) -> float | None:
    values = arm.times.get(key)
    return min(values) if values else None
