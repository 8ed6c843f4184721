"""The passes behind sm_90a's TMA copies, on the traced IR: tensor-maps gives a map to each
group load into a shared tile whose layout is a swizzle mode (one map per parameter and tile
shape); lds-alloc aligns those tiles to 1024 bytes and places one mbarrier per tile after the
tiles; the waits pass names, at each wait, the mbarriers of the TMA copies it completes while
its counter count covers only the cp.async copies (a shared vector's); codegen refuses a
shared tile carried through a loop instead of copying it into a local variable."""
from pathlib import Path

import pytest

import ktile as hk
from ktile.codegen import translate
from ktile.errors import KernelError
from ktile.ir import ops as kt
from ktile.ir.query import arrivals, kernel_func, tensor_maps

GRID = (1, 1, 1)
SOURCE = Path(__file__).read_text().splitlines()


def line(name: str) -> int:
    return next(n for n, text in enumerate(SOURCE, 1) if text.rstrip().endswith(f"# <- {name}"))


def waits(trace) -> list[tuple[int | None, list[int]]]:
    out = []
    for op in kernel_func(trace.module).walk():
        if isinstance(op, kt.WaitForOp):
            slots = op.properties.get("arrivals")
            named = [] if slots is None else [a.value.data for a in slots.data]
            out.append((op.prop_int("vm"), named))
    return out


@hk.kernel(grid=GRID, warps=4)
def mixed(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *, ORDER: hk.Constexpr[int] = 0):
    v = hk.shared(hk.SV(hk.bf16, 64))          # a shared vector: a cp.async copy
    s = hk.shared(hk.ST(hk.bf16, 16, 64))      # 128-byte rows: a TMA copy
    if ORDER == 0:
        hk.group.load(v, a[0, 0, 0, 0])
        hk.group.load(s, a[0, 0, 0, 0])
        hk.wait_for(s)                          # completes the older vector copy too
    elif ORDER == 1:
        hk.group.load(s, a[0, 0, 0, 0])
        hk.group.load(v, a[0, 0, 0, 0])
        hk.wait_for(v)                          # completes the older tile copy too
    else:
        hk.group.load(s, a[0, 0, 0, 0])
        hk.group.load(v, a[0, 0, 0, 0])
        hk.wait_for(s)                          # the vector's copy stays in flight
        hk.wait_for(v)
    hk.barrier()
    t = s.load(hk.RT(hk.bf16, 16, 64))
    hk.wait_for(t)
    o[0, 0, 0, 0] = t


@pytest.mark.parametrize("order, expected", [
    (0, [(0, [0]), (None, [])]),
    (1, [(0, [0]), (None, [])]),
    (2, [(None, [0]), (0, []), (None, [])]),
])
def test_a_wait_names_the_mbarriers_and_counts_only_the_cp_async_copies(order, expected):
    trace = mixed.trace("sm_90a", ORDER=order)
    assert waits(trace) == expected
    text = trace.source()
    assert "kt::copy_async<0>(" in text and "kt_map0" in text     # the tile: TMA, slot 0
    assert "kt::copy_async(v" in text                              # the vector: cp.async


def test_amd_targets_and_a_build_without_maps_keep_the_counter_alone():
    for target in ("gfx950", "gfx1100"):
        assert waits(mixed.trace(target, ORDER=1)) == [(0, []), (None, [])]
    assert waits(mixed.trace_copies("sm_90a", False, {"ORDER": 1})) == [(0, []), (None, [])]


@hk.kernel(grid=GRID, warps=4)
def staged(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    small = hk.shared(hk.SV(hk.fp32, 16))
    sa = [hk.shared(hk.ST(hk.bf16, 16, 64)) for _ in range(2)]
    sb = hk.shared(hk.ST(hk.bf16, 32, 32))
    for i in range(2):
        hk.group.load(sa[i], a[0, 0, i, 0])
    hk.group.load(sb, b[0, 0, 0, 0])
    hk.wait_for(*sa, sb)
    hk.barrier()
    x = sa[1].load(hk.RT(hk.bf16, 16, 64))
    hk.wait_for(x)
    o[0, 0, 0, 0] = x.to(hk.fp32)
    small.store(hk.zeros(hk.RV(hk.fp32, 16)))


def test_maps_per_parameter_and_shape_and_tiles_aligned_for_the_swizzle():
    trace = staged.trace("sm_90a")
    fn = kernel_func(trace.module)
    # a's two 16x64 tiles share a map; b's 32x32 tile (64-byte rows: the 64B swizzle) has one
    assert tensor_maps(fn) == [(0, 64, 16, 128, 2), (1, 32, 32, 64, 2)]
    offsets = [op.prop_int("offset") for op in fn.walk() if isinstance(op, kt.AllocOp)]
    slots = [op.prop_int("arrival") for op in fn.walk() if isinstance(op, kt.AllocOp)]
    assert offsets == [0, 1024, 3072, 5120] and slots == [None, 0, 1, 2]
    assert arrivals(fn) == (7168, 3)                   # after the tiles, 8 bytes each
    assert fn.attributes["kt.lds_bytes"].value.data == 7168 + 3 * 8
    gfx = kernel_func(staged.trace("gfx950").module)   # no TMA: packed, no mbarriers
    assert tensor_maps(gfx) == [] and arrivals(gfx) is None
    assert [op.prop_int("offset") for op in gfx.walk() if isinstance(op, kt.AllocOp)] == \
        [0, 64, 2112, 4160]


@hk.kernel(grid=GRID, warps=4)
def seventeen(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    tiles = [hk.shared(hk.ST(hk.bf16, 16, 16)) for _ in range(17)]  # <- seventeen
    for i, s in enumerate(tiles):
        hk.group.load(s, a[0, 0, i, 0])
    hk.wait_for(*tiles)


def test_more_tma_tiles_than_mbarrier_slots_is_refused():
    with pytest.raises(KernelError) as caught:
        seventeen.trace("sm_90a")
    assert "group loads write 17 shared tiles, over the 16 that sm_90a's TMA copies" in \
        caught.value.message and caught.value.loc.line == line("seventeen")
    seventeen.trace("gfx950")                           # counters: no such limit


@hk.kernel(grid=GRID, warps=4)
def swapped(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s, t = hk.shared(hk.ST(hk.bf16, 16, 64)), hk.shared(hk.ST(hk.bf16, 16, 64))
    for k in hk.range(4):  # <- swap-loop
        hk.group.load(s, a[0, 0, k, 0])
        hk.wait_for(s)
        hk.barrier()
        s, t = t, s


@pytest.mark.parametrize("target", ["sm_90a", "gfx950"])
def test_a_shared_tile_carried_through_a_loop_is_refused_by_codegen(target):
    trace = swapped.trace(target)
    assert tensor_maps(kernel_func(trace.module)) == []    # carried: no TMA copy either
    with pytest.raises(KernelError) as caught:
        translate(trace.module, trace.target)
    assert "this loop carries a shared tile" in caught.value.message
    assert caught.value.loc.line == line("swap-loop")
