"""The op benchmark's cases on the CPU (ktile on the interpreter, at one tiny shape per op):
every public memory-bound op has a bench, each bench's torch formula agrees with ktile, and
the bytes each bench counts are the bytes its call reads and writes."""
import pytest

torch = pytest.importorskip("torch")

from ktile.bench import cases, runner  # noqa: E402

COMPUTE_BOUND = {"matmul", "linear",       # timed by benchmarks/wgmma_gemm.py, not here
                 "scaled_dot_product_attention",   # benchmarks/attention.py
                 "moe_align_block_size", "moe_grouped_gemm", "fused_moe"}   # benchmarks/moe.py
COMPUTE_BOUND |= {"awq_gemm", "awq_dequantize"}   # W4A16: timed by benchmarks/awq.py
COMPUTE_BOUND |= {"scaled_mm"}   # fp8 GEMM: timed by benchmarks/matmul_fp8.py
COMPUTE_BOUND |= {"paged_attention_decode"}   # timed by benchmarks/paged_decode.py


@pytest.fixture(autouse=True)
def on_the_cpu():
    cases.DEVICE[0] = "cpu"
    yield
    cases.DEVICE[0] = "cuda"


def nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def test_every_memory_bound_op_has_a_bench():
    import ktile.ops
    public = {name for op in ktile.ops.all_ops() for name in op.functions}
    assert public - COMPUTE_BOUND - set(cases.benches()) == set()
    for bench in cases.benches().values():
        assert {s.label for s in bench.quick} <= {s.label for s in bench.shapes}
        assert bench.quick and len(bench.shapes) >= len(bench.quick)


@pytest.mark.parametrize("name", list(cases.benches()))
def test_the_torch_formula_agrees_with_ktile(name):
    bench = cases.benches()[name]
    inputs = bench.make(cases.small(bench))
    want = bench.ktile(*runner._fresh(bench, inputs))
    got = bench.torch(*runner._fresh(bench, inputs))
    verdict = runner.check(bench, "torch", got, want)
    if name == "dropout":
        assert verdict == {"compared": False}
        return
    assert verdict["ok"], f"{name}: error {verdict['error']} > {verdict['tolerance']}"


# ops whose inputs are not read whole: a table or a cache of which only some rows are touched
def touched_bytes(name, shape, inputs, outputs) -> int:
    if name == "embedding":
        ids, _ = inputs
        return nbytes([ids]) + 2 * nbytes(outputs)
    if name == "kv_cache_write":
        key, value, _, _, slots = inputs
        return 2 * nbytes([key, value]) + nbytes([slots])
    if name == "rotary_embedding":
        positions, q, k, cache = inputs
        return 2 * nbytes([q, k]) + nbytes([positions]) + shape.dims["tokens"] * cache.shape[1] * 4
    return nbytes(t for t in inputs if isinstance(t, torch.Tensor)) + nbytes(outputs)


@pytest.mark.parametrize("name", list(cases.benches()))
def test_the_bytes_counted_are_the_bytes_moved(name):
    bench = cases.benches()[name]
    shape = cases.small(bench)
    inputs = bench.make(shape)
    outputs = cases.tensors(bench.torch(*runner._fresh(bench, inputs)))
    assert bench.nbytes(shape) == touched_bytes(name, shape, inputs, outputs)
