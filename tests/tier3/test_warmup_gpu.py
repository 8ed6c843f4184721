"""Warm-up, then nothing compiles, on the GPU (issue #14): `ktile.ops.warmup` of a decoder
model for this GPU's target, then every op call of that model at its shapes on CUDA tensors,
and a CUDA-graph capture and replay of a few of them, run no compiler (`build_count`)."""
import importlib

import pytest

from ktile.runtime import build_count

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]
warm = importlib.import_module("ktile.ops.warmup")   # ktile.ops.warmup is the function

MODEL = {"hidden_size": 4096, "intermediate_size": 14336, "vocab_size": 32000, "num_heads": 32,
         "head_dim": 128, "max_tokens": 1024}
CAPTURED = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "add")


def test_warmup_then_every_op_and_a_graph_compile_nothing():
    warm.warmup(MODEL)                                     # this GPU's target
    before = build_count()
    for function, problems in warm.model_shapes(MODEL).items():
        for shape in problems:
            warm.call_shape(function, shape, torch.bfloat16, MODEL, device="cuda")
    torch.cuda.synchronize()
    calls = {fn: warm.CALLS[fn].make(8, MODEL["hidden_size"], torch.bfloat16, MODEL, "cuda")
             for fn in CAPTURED}
    import ktile.ops as ops
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):                          # torch's warm-up before capture
        for fn, args in calls.items():
            getattr(ops, fn)(*args)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for fn, args in calls.items():
            getattr(ops, fn)(*args)
    graph.replay()
    torch.cuda.synchronize()
    assert (build_count() - before).compiles == 0
