"""matmul's warp-specialised kernel `wgmma_ws_nt` (tiles_ws.py, issue #11): its 1-D grid in
grouped raster order covers every output tile once on the interpreter, in both pipeline forms
(sm_90a's roles, gfx950's turns), at ragged shapes; GROUP_M < 1 is refused before it runs;
the routes by M (128 x 128 tiles for small M, 128 x 256 above); the wgmma on stages only TMA
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
@pytest.mark.parametrize("group", [2, 8])
def test_grouped_grid_covers_every_tile_once(target, group):
    """3 x 3 ragged output tiles of 128 x 128 in bands of 2 row tiles (the last band one), or
    of 8 (one band of all 3): a tile left out would stay zero, one of another would differ."""
    a, w, bias = operands(300, 300, 100)
    out = torch.zeros(300, 300).bfloat16()
    tiles_ws.wgmma_ws_nt("bf16").interpret(a, w, bias, out, target=target, BN=128, STAGES=3,
                                          GROUP_M=group)
    want = a.float().numpy() @ w.float().numpy().T + bias.float().numpy()
    assert np.abs(out.float().numpy() - want).max() <= 2 ** -7 * np.abs(want).max()


def test_group_m_below_one_is_refused():
    a, w, bias = operands(130, 130, 64)
    out = torch.zeros(130, 130).bfloat16()
    with pytest.raises(InputError, match="GROUP_M"):
        tiles_ws.wgmma_ws_nt("bf16").interpret(a, w, bias, out, target="sm_90a", GROUP_M=0)


@pytest.mark.parametrize("m,bn,stages", [(65, 128, 6), (512, 128, 6), (config.WS_SMALL_M, 128, 6),
                                         (config.WS_SMALL_M + 1, 256, 4), (8192, 256, 4)])
def test_routes_by_rows(m, bn, stages):
    route = config.choose("nt", m, 4096, "sm_90a", 4096)
    assert route.kernel == "wgmma_ws_nt"
    assert (route.constants["BN"], route.constants["STAGES"]) == (bn, stages)


def test_tma_stages_take_no_proxy_fence_and_cp_async_stages_do():
    kernel = tiles_ws.wgmma_ws_nt("bf16")
    assert "kt::mma_ABt_shared<8, false>(" in kernel.trace("sm_90a").source()
    assert "kt::mma_ABt_shared<8>(" in kernel.trace_copies("sm_90a", False, {}).source()
