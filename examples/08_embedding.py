"""08 embedding: rows by index with gather (an id outside the table gives a zero row)."""
import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


@hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, 64), hk.cdiv(p.ids.cols, 16)),
           requires=[(lambda p: p.ids.batch == 1,
                      "ids.batch must be 1: the grid does not cover batch (one call per batch)"),
                     (lambda p: p.ids.depth == 1,
                      "ids.depth must be 1: the grid does not cover depth (reshape it into rows)")])
def embedding(ids: hk.Tensor[hk.i32], table: hk.Tensor[hk.bf16], out: hk.Tensor[hk.bf16]):
    t, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    rows = ids[hk.tile_coord(0, 0, 0, t)].load(hk.RV(hk.i32, 16), pad=-1)   # 16 token ids
    out[hk.tile_coord(0, 0, t, c)] = hk.gather(table, rows, hk.RT(hk.bf16, 16, 64), col=c)


KERNELS = [(embedding, {})]
CASES = [(16, 100, 64), (45, 1000, 96), (7, 30, 200)]   # (tokens, vocabulary, width)


def run_case(case, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.embedding.reference import embedding as reference
    tokens, vocab, width = case
    g = torch.Generator().manual_seed(13)
    ids = torch.randint(-2, vocab + 2, (1, 1, 1, tokens), generator=g, dtype=torch.int32)
    table = torch_rand((1, 1, vocab, width), torch.bfloat16, 14)
    out = torch.full((1, 1, tokens, width), float("nan"), dtype=torch.bfloat16)
    runner(embedding, backend, device)(ids, table, out, target=target)
    want = reference(ids.numpy(), table[0, 0].float().numpy())
    return max_abs_error(out[0, 0].float().numpy(), want), 0.0


if __name__ == "__main__":
    example_main(globals())
