"""matmul's warp-specialised kernel `wgmma_ws_nt` (tiles_ws.py, issue #11): its 1-D grid in
grouped raster order covers every output tile once on the interpreter, in both pipeline forms
(sm_90a's roles, gfx950's turns), at ragged shapes; GROUP_M < 1 is refused before it runs;
the routes by M and N (128 x 192 tiles at M 385..512 and N a multiple of 6144, 128 x 128
for other small M, 128 x 256 above); the wgmma on stages only TMA
writes goes without the proxy fence, cp.async-written stages keep it."""
import numpy as np
import pytest

from ktile.errors import InputError
from ktile.ops.matmul import config, tiles_ws

torch = pytest.importorskip("torch")


def operands(m, n, k, seed=5):
    g = torch.Generator().manual_seed(seed)
    a, w = torch.randn(m, k, generator=g).bfloat16(), torch.randn(n, k, generator=g).bfloat16()
    return a, w, torch.randn(n, generator=g).bfloat16()


@pytest.mark.parametrize("target", ["sm_90a", "gfx950"])
@pytest.mark.parametrize("group,bn", [(2, 128), (8, 128), (2, 192)])
def test_grouped_grid_covers_every_tile_once(target, group, bn):
    """3 x 3 ragged output tiles of 128 x 128 (3 x 2 of 128 x 192) in bands of 2 row tiles
    (the last band one), or of 8 (one band of all 3): a tile left out would stay zero, one of
    another would differ."""
    a, w, bias = operands(300, 300, 100)
    out = torch.zeros(300, 300).bfloat16()
    tiles_ws.wgmma_ws_nt("bf16").interpret(a, w, bias, out, target=target, BN=bn, STAGES=3,
                                          GROUP_M=group)
    want = a.float().numpy() @ w.float().numpy().T + bias.float().numpy()
    assert np.abs(out.float().numpy() - want).max() <= 2 ** -7 * np.abs(want).max()


def test_group_m_below_one_is_refused():
    a, w, bias = operands(130, 130, 64)
    out = torch.zeros(130, 130).bfloat16()
    with pytest.raises(InputError, match="GROUP_M"):
        tiles_ws.wgmma_ws_nt("bf16").interpret(a, w, bias, out, target="sm_90a", GROUP_M=0)


@pytest.mark.parametrize("m,n,bn,stages", [
    (65, 4096, 128, 6), (512, 4096, 128, 6), (config.WS_SMALL_M, 6144, 128, 6),
    (config.WS_SMALL_M + 1, 4096, 256, 4), (8192, 24576, 256, 4),
    (385, 6144, 192, 5), (512, 12288, 192, 5), (384, 6144, 128, 6), (512, 8192, 128, 6)])
def test_routes_by_rows_and_columns(m, n, bn, stages):
    route = config.choose("nt", m, n, "sm_90a", 4096)
    assert route.kernel == "wgmma_ws_nt"
    assert (route.constants["BN"], route.constants["STAGES"]) == (bn, stages)


def test_tma_stages_take_no_proxy_fence_and_cp_async_stages_do():
    kernel = tiles_ws.wgmma_ws_nt("bf16")
    assert "kt::mma_ABt_shared<8, false>(" in kernel.trace("sm_90a").source()
    assert "kt::mma_ABt_shared<8>(" in kernel.trace_copies("sm_90a", False, {}).source()
