"""TMA copies on the GPU (tier 3, skipped without a GPU): a group load into a shared tile whose
layout is a TMA swizzle mode is a `cp.async.bulk.tensor` copy completing on the tile's
mbarrier, with a tensor map the call encodes (`ktile/runtime/tensor_maps.py`). Every swizzle
mode (128-, 64-, 32-byte rows), fp32 and bf16, boxes spread over warp 0's lanes (16×4096: 64
boxes), tiles of more than 256 rows (two row boxes), ragged edges (zero-filled by the TMA), a
batch plane outside the tensor, repeated calls with new data (a map per pointer), and a row
stride no map can describe, which runs the kernel traced without TMA copies.
"""
import pytest

import ktile as hk
from ktile.runtime import gpu

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.tier3


def copier(dtype, rows: int, cols: int, warps: int = 4):
    """o[b] = x[b + SHIFT] tile by tile, through a shared tile and registers: pieces of 16 rows
    by up to 64 columns, taken by the warps in turn."""
    width = min(cols, 64)
    pieces = [(i, j) for i in range(rows // 16) for j in range(cols // width)]

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, cols), hk.cdiv(p.o.rows, rows), p.o.batch),
               warps=warps)
    def tile_copy(x: hk.Tensor[dtype], o: hk.Tensor[dtype], *, SHIFT: hk.Constexpr[int] = 0):
        b, r, c, w = hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x, hk.arch.warp_id
        s = hk.shared(hk.ST(dtype, rows, cols))
        hk.group.load(s, x[hk.tile_coord(b + SHIFT, 0, r, c)])
        hk.wait_for(s)
        hk.barrier()
        for k, (i, j) in enumerate(pieces):         # unrolled: piece k is warp k % warps's
            if w == k % warps:
                t = s.load(hk.RT(dtype, 16, width), row=i, col=j)
                hk.wait_for(t)
                o[hk.tile_coord(b, 0, r * (rows // 16) + i, c * (cols // width) + j)] = t
    return tile_copy


# (dtype, rows, cols, tensor shape (batch, rows, cols)); rows a multiple of 16 bytes apart
# (a map describes the tensor), ragged against the tile in rows and columns
CASES = [
    (hk.bf16, 16, 64, (2, 100, 328)),        # 128-byte rows: the 128B swizzle
    (hk.bf16, 32, 128, (1, 64, 256)),        # two column boxes
    (hk.bf16, 16, 32, (1, 45, 72)),          # 64-byte rows: 64B
    (hk.bf16, 16, 16, (1, 33, 40)),          # 32-byte rows: 32B
    (hk.fp32, 16, 32, (2, 40, 100)),         # fp32, 128-byte rows
    (hk.bf16, 512, 64, (1, 700, 64)),        # over 256 rows: two row boxes
    (hk.bf16, 16, 4096, (1, 40, 4096)),      # 64 boxes over warp 0's lanes
]


def tensor(shape, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    torch_dtype = torch.bfloat16 if dtype == hk.bf16 else torch.float32
    return torch.randn((shape[0], 1, *shape[1:]), generator=g, device="cuda").to(torch_dtype)


@pytest.mark.parametrize("dtype,rows,cols,shape", CASES,
                         ids=[f"{d.name}-{r}x{c}" for d, r, c, _ in CASES])
def test_tensor_copy_matches_and_is_a_tma_copy(dtype, rows, cols, shape):
    kernel = copier(dtype, rows, cols)
    assert kernel.trace("sm_90a").source().count("kt_map0") >= 2   # a parameter and its copy
    call = gpu.GpuCall(kernel, None, {})
    for seed in (1, 2):                              # new data, new pointers: new maps
        x = tensor(shape, dtype, seed)
        o = torch.full_like(x, float("nan"))
        call.fast((x, o))
        torch.cuda.synchronize()
        assert call.tensor_copies, call.no_tensor_copies_because
        torch.testing.assert_close(o, x, rtol=0, atol=0)


def test_a_plane_outside_the_tensor_is_zero_filled():
    kernel = copier(hk.bf16, 16, 64)
    x = tensor((3, 50, 136), hk.bf16, 3)
    o = torch.full_like(x, float("nan"))
    call = gpu.GpuCall(kernel, None, {"SHIFT": 1})
    call.fast((x, o))
    torch.cuda.synchronize()
    assert call.tensor_copies
    torch.testing.assert_close(o[:2], x[1:], rtol=0, atol=0)
    assert bool((o[2] == 0).all())


def test_a_row_stride_no_map_describes_takes_the_cp_async_build():
    kernel = copier(hk.bf16, 16, 64)
    x = tensor((1, 40, 100), hk.bf16, 4)             # rows 200 bytes apart: no multiple of 16
    o = torch.full_like(x, float("nan"))
    call = gpu.GpuCall(kernel, None, {})
    call.fast((x, o))
    torch.cuda.synchronize()
    assert not call.tensor_copies and "stride of 200 bytes" in call.no_tensor_copies_because
    torch.testing.assert_close(o, x, rtol=0, atol=0)
    y = tensor((1, 40, 128), hk.bf16, 5)             # rows 256 bytes apart: TMA again
    o2 = torch.full_like(y, float("nan"))
    call.fast((y, o2))
    torch.cuda.synchronize()
    assert call.tensor_copies
    torch.testing.assert_close(o2, y, rtol=0, atol=0)


def test_maps_are_cached_per_data_pointer(monkeypatch):
    from ktile.runtime.loaders import cuda
    encoded = []
    real = cuda.encode_tensor_map
    monkeypatch.setattr(cuda, "encode_tensor_map",
                        lambda *a: encoded.append(a[2]) or real(*a))
    kernel = copier(hk.bf16, 16, 64)
    x, y = tensor((1, 32, 64), hk.bf16, 6), tensor((1, 32, 64), hk.bf16, 7)
    o = torch.empty_like(x)
    call = gpu.GpuCall(kernel, None, {})
    for src in (x, y, x, y):
        call.fast((src, o))
        torch.cuda.synchronize()
        torch.testing.assert_close(o, src, rtol=0, atol=0)
    assert sorted(set(encoded)) == sorted({x.data_ptr(), y.data_ptr()})
    assert len(encoded) == 2                         # each pointer encoded once
