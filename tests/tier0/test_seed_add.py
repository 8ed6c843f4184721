"""The seed's `add` kernel, verbatim (under `import ktile as hk`), runs on the interpreter and
matches at regular and ragged shapes; bad tensors get clear errors."""
import pytest

import ktile as hk

torch = pytest.importorskip("torch")

# ---- from seeds/hk-dsl-readme.txt, unchanged but for the import ----------------------------
@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y,
                        hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1, 1, 16, 64), (2, 1, 32, 128), (1, 1, 17, 65),
                                   (3, 1, 1, 1), (2, 1, 100, 300)])
def test_seed_add_matches(shape):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(shape, generator=g).to(torch.bfloat16)
    b = torch.randn(shape, generator=g).to(torch.bfloat16)
    out = torch.full(shape, float("nan"), dtype=torch.bfloat16)
    add(a, b, out)
    assert torch.equal(out, (a.float() + b.float()).to(torch.bfloat16))


def test_seed_add_steps():
    assert '"kt.binary"' in add.trace().dump()
    assert "kt::store" in add.source()
    assert "hopper" in add.source(target="sm_90a")


def test_seed_add_refuses_bad_tensors():
    good = torch.zeros(1, 1, 16, 64, dtype=torch.bfloat16)
    with pytest.raises(hk.InputError, match="must hold hk.bf16"):
        add(good, good.float(), good)
    with pytest.raises(hk.InputError, match="'a' has 5 dimensions"):
        add(good[None], good, good)
    with pytest.raises(hk.InputError, match="'o' is a 0-D tensor"):
        add(good, good, good[0, 0, 0, 0])
    with pytest.raises(hk.InputError, match="differ in shape"):
        add(good, torch.zeros(1, 1, 16, 65, dtype=torch.bfloat16), good)
