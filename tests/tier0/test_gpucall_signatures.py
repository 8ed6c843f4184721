"""A GPU call keeps its last SIGNATURES prepared signatures: calls whose shapes alternate (an
engine's decode and prefill steps) take a prepared fast path again instead of preparing, the
least recently used is dropped beyond SIGNATURES, a bad new signature is refused as before, and
what depends on the pointers (alignment, aliasing) is still checked at every call. CPU tensors
stand in for CUDA ones; the fake loaders of test_runtime_dispatch and test_runtime_tensor_maps
record the launches."""
import pytest

from ktile.errors import InputError
from ktile.runtime import gpu
from tests.tier0.test_runtime_dispatch import (add, launches,  # noqa: F401 - a fixture
                                               one_buffer, tensors)
from tests.tier0.test_runtime_tensor_maps import bf16, fake, staged  # noqa: F401 - a fixture

torch = pytest.importorskip("torch")

DECODE, PREFILL, OTHER = (1, 1, 16, 64), (1, 1, 37, 100), (2, 1, 48, 192)
GRIDS = {DECODE: (1, 1, 1), PREFILL: (2, 3, 1), OTHER: (3, 3, 2)}


def counting(call):
    """The call, with `prepares` counting its preparations of a new signature."""
    call.prepares = 0
    prepare = call._prepare

    def counted(args):
        call.prepares += 1
        return prepare(args)
    call._prepare = counted
    return call


def run(call, launches, shape):
    """One call on fresh tensors of `shape`; asserts what it launched."""
    a, b, o = tensors(shape)
    call.fast((a, b, o))
    grid, pointers, _ = launches.log[-1]
    assert grid == GRIDS[shape] and pointers == [a.data_ptr(), b.data_ptr(), o.data_ptr()]


def test_alternating_signatures_are_prepared_once_each(launches):
    call = counting(gpu.GpuCall(add, None, {}))
    for shape in (DECODE, PREFILL, DECODE, PREFILL, OTHER, DECODE, OTHER, PREFILL):
        run(call, launches, shape)
    assert call.prepares == 3 and len(launches.log) == 8
    assert launches.loads == [-1]                     # one trace, loaded once


def test_the_least_recently_used_signature_is_dropped_beyond_the_limit(launches):
    call = counting(gpu.GpuCall(add, None, {}))
    call.SIGNATURES = 2
    for shape in (DECODE, PREFILL, OTHER):            # DECODE dropped
        run(call, launches, shape)
    assert call.prepares == 3
    run(call, launches, DECODE)                       # prepared again; PREFILL dropped
    assert call.prepares == 4
    run(call, launches, OTHER)                        # still kept
    assert call.prepares == 4
    run(call, launches, PREFILL)
    assert call.prepares == 5


def refusal(call, args) -> str:
    with pytest.raises(InputError) as err:
        call.fast(args)
    return str(err.value)


def test_a_bad_new_signature_is_refused_as_by_a_fresh_call(launches):
    call = counting(gpu.GpuCall(add, None, {}))
    for shape in (DECODE, PREFILL):
        run(call, launches, shape)
    a, b, o = tensors((1, 1, 16, 128))
    strided = (a[..., ::2], b[..., :64], o[..., :64])
    x, y, z = tensors(DECODE)
    wrong_dtype = (x.float(), y, z)
    for bad in (strided, wrong_dtype):
        fresh = refusal(gpu.GpuCall(add, None, {}), bad)
        assert refusal(call, bad) == fresh and refusal(call, bad) == fresh   # never kept
    assert call.prepares == 2 + 4 and len(launches.log) == 2
    run(call, launches, PREFILL)                      # the good ones still kept
    run(call, launches, DECODE)
    assert call.prepares == 6


def test_alignment_and_aliasing_are_checked_at_every_call_of_a_kept_signature(launches):
    call = counting(gpu.GpuCall(add, None, {}))
    first, second = one_buffer(0, 8)[0], one_buffer(0, 8)[1]   # (16, 72) strides, disjoint
    call.fast((first, torch.zeros_like(first), second))
    run(call, launches, DECODE)                       # the fast path is DECODE's now
    a, o = one_buffer(0, 8)                           # the same signature, overlapping data
    assert "'o' is written and overlaps input 'a'" in refusal(call, (a, torch.zeros_like(a), o))
    flat = torch.zeros(16 * 64 + 8, dtype=torch.bfloat16)
    shifted = flat[1:1 + 16 * 64].view(DECODE)        # DECODE's signature, 2 bytes off
    y, z = tensors(DECODE, 2)
    run(call, launches, PREFILL)
    assert "'b' starts 2 bytes past a 16-byte boundary" in refusal(call, (y, shifted, z))
    assert call.prepares == 3 and len(launches.log) == 3
    run(call, launches, DECODE)                       # kept, launched with the new pointers
    assert call.prepares == 3


def test_the_attributes_describe_the_signature_in_use(launches):
    call = gpu.GpuCall(add, None, {})
    run(call, launches, DECODE)
    decode_params = call.params
    run(call, launches, PREFILL)
    assert call.params is not decode_params
    run(call, launches, DECODE)
    assert call.params is decode_params


def test_kept_signatures_with_and_without_tensor_maps_alternate(fake):
    """A signature whose rows no map describes runs the build without TMA copies; alternating
    with one that has maps, each keeps its own build's launch (and its maps' pointers)."""
    call = counting(gpu.GpuCall(staged, None, {}))
    for _ in range(2):
        x = bf16((1, 1, 16, 128))
        call.fast((x, bf16((1, 1, 16, 128))))
        assert call.tensor_copies and fake.launches[-1] == (3, [x.data_ptr()])
        call.fast((bf16((1, 1, 16, 100)), bf16((1, 1, 16, 100))))   # rows 200 bytes apart
        assert not call.tensor_copies and "200 bytes" in call.no_tensor_copies_because
        assert fake.launches[-1] == (2, [])
    assert call.prepares == 2 and len(fake.launches) == 4


def test_threads_alternating_signatures_launch_each_call_with_its_own_block(launches):
    """Each launch reads the parameter block of its own signature with its own pointers, while
    other threads switch the fast path between signatures."""
    import threading
    call = gpu.GpuCall(add, None, {})
    made: dict[int, tuple] = {}                       # a's data pointer → (grid, pointers)
    lock = threading.Lock()

    def work(shapes):
        for _ in range(40):
            for shape in shapes:
                a, b, o = tensors(shape)
                with lock:
                    made[a.data_ptr()] = (GRIDS[shape], [a.data_ptr(), b.data_ptr(),
                                                         o.data_ptr()], (a, b, o))
                call.fast((a, b, o))

    threads = [threading.Thread(target=work, args=(order,))
               for order in ((DECODE, PREFILL), (PREFILL, DECODE), (OTHER, DECODE))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(launches.log) == 3 * 40 * 2
    for grid, pointers, _ in launches.log:
        assert made[pointers[0]][:2] == (grid, pointers)
