"""09 KV-cache write: rows to cache slots with scatter; padding slots (-1) are dropped."""
import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


@hk.kernel(grid=lambda p: (hk.cdiv(p.new.cols, 64), hk.cdiv(p.new.rows, 16), p.new.depth),
           requires=[(lambda p: p.new.batch == 1,
                      "new.batch must be 1: the grid does not cover batch (one call per batch)")])
def kv_write(new: hk.Tensor[hk.bf16], slots: hk.Tensor[hk.i32], cache: hk.Tensor[hk.bf16]):
    h, t, c = hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x
    where = slots[hk.tile_coord(0, 0, 0, t)].load(hk.RV(hk.i32, 16), pad=-1)
    rows = new[hk.tile_coord(0, h, t, c)].load(hk.RT(hk.bf16, 16, 64))
    hk.scatter(cache, where, rows, col=c, depth=h)


KERNELS = [(kv_write, {})]
CASES = [(16, 64, 64, 1), (30, 100, 128, 2), (5, 40, 80, 3)]   # (tokens, slots, width, heads)


def run_case(case, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.kv_cache.reference import kv_write as reference
    tokens, n_slots, width, heads = case
    g = torch.Generator().manual_seed(15)
    slots = torch.randperm(n_slots, generator=g)[:tokens].to(torch.int32)
    slots[::4] = -1                                       # padding tokens
    slots = slots.reshape(1, 1, 1, tokens)
    new = torch_rand((1, heads, tokens, width), torch.bfloat16, 16)
    cache = torch_rand((1, heads, n_slots, width), torch.bfloat16, 17)
    want = [reference(cache[0, h].float().numpy(), new[0, h].float().numpy(), slots.numpy())
            for h in range(heads)]
    runner(kv_write, backend, device)(new, slots, cache, target=target)
    return max(max_abs_error(cache[0, h].float().numpy(), want[h]) for h in range(heads)), 0.0


if __name__ == "__main__":
    example_main(globals())
