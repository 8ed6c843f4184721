"""Softmax's configuration space, by (rows, cols) of the 2-D view; the first route that fits wins.

Rows of a multiple of 16 columns take the row-as-a-tile kernels (row_tile.py: x viewed as
[rows * 16, cols // 16], one flat 16 x C register tile per warp per step; every row-tile route
has `cols_multiple=16`, a chunk route (chunks.py) its C), C = 64 (runs of 64 contiguous values
per tile row: 128 bytes in 16-bit dtypes, 256 in fp32) unless the row is narrower:

- up to 16384 columns at any row count, 32768 past CHUNK_ROWS rows: `softmax_held`, one block
  per row held in registers
  (x read once), 1 to 16 warps of one tile each by width, then 16 warps of two (sm_90a: 128
  registers, the most 512 lanes may take: x as fp32 exps, 64 per lane); up to FEW_ROWS rows
  (latency, not bandwidth) 4 to 16 warps of 16 x 16 / 16 x 32 tiles up to 8192 columns. The
  H200 sweep of 2026-12-02 (`sweep.py --quick --explore`) measured 128 x 32000 held at 22.6
  us (fp32) / 12.7 (bf16) against 31.3 / 27.1 split, and 1 x 32000 bf16 held 10.0 against
  11.6 split; 32 x 4096 8 warps of 16 x 32 at 6.0 / 5.4 against 16 of 16 x 16's 6.4 / 5.6;
- wider than 16384 columns at up to CHUNK_ROWS rows, wider at up to 128 (fewer than a GPU of
  blocks), columns a multiple of 32: `softmax_chunk_stats` then `softmax_chunk_write`
  (chunks.py: x viewed as [rows, cols // C, C], each warp tile 16·C contiguous elements, a
  block's warps on consecutive tiles; `chunk_split_count` blocks per row). Not yet measured on
  the H200 (2026-12-02, session 7): chosen over the row-tile split below because that one's
  tiles are 16 runs a sixteenth of the row apart (the sweep's `--explore` times both);
- wider, up to 128 rows, other multiples of 16: each row split across blocks,
  `softmax_stats` then `softmax_write` (two launches, no atomics; `split_count` blocks per
  row, passed as the scratch's shape), so a handful of vocabulary rows fills the GPU: 16 x 32
  tiles, 8 blocks per multiprocessor (the same sweep: 1 x 128256 at 10.6 us against 15.1 at
  16 x 64 and 4 per multiprocessor; 32 x 151936 fp32 33.6 against 36.7);
- wider, more rows: `softmax_chunk_loop` (columns a multiple of 64: contiguous tiles) or
  `softmax_loop`, one block per row, x read twice.

Rows of other widths take the 16-row kernels (kernels.py), correct at any width but slower:
`softmax_rows` up to 4096 columns, their split form for up to 512 rows, `softmax_rows`.

A split route is always followed by its twin at the same constants (`softmax_stats` by
`softmax_write`, `softmax_chunk_stats` by `softmax_chunk_write`, `softmax_partials` by
`softmax_normalize`): the op launches both; the twin is listed so the build and emulation tests
compile it. `TABLE` is read at each call."""
from .._library import Route, RoutingTable

TILE = 16                      # cols_multiple of the row-tile routes: 16 view rows per row
HELD_MAX_COLS = 32768
SPLIT_MAX_ROWS = 128
FEW_ROWS = 128                # up to this many rows the held routes take more, narrower warps
SPLIT = {"C": 32, "WARPS": 4}
LOOP = {"C": 64, "WARPS": 8}
CHUNK_SPLIT = {"C": 32, "WARPS": 4}
CHUNK_LOOP = {"C": 64, "WARPS": 8}
CHUNK_ROWS = 32               # up to this many rows, rows over 16384 columns split (latency)
MAX_SPLITS = 64
BLOCKS_PER_SM = 8             # the split routes aim for this many blocks per multiprocessor
ROWS16_SPLIT = {"BLOCK": 4096, "COLS": 64, "WARPS": 4}


def held(max_cols: int, warps: int, tiles: int = 1, c: int = 64,
         max_rows: int | None = None) -> Route:
    """`softmax_held` for rows up to `max_cols` wide: `warps` warps of `tiles` 16 x c tiles."""
    assert tiles * warps * c * TILE >= max_cols
    return Route("softmax_held", {"C": c, "HELD": tiles, "WARPS": warps}, max_rows=max_rows,
                 max_cols=max_cols, cols_multiple=TILE,
                 sample=(3, max_cols - 3 * TILE if max_cols > 256 else 240))


def chunk_split(max_rows: int, twin: bool = False, constants: dict | None = None) -> Route:
    """`softmax_chunk_stats` (or its twin `softmax_chunk_write`) for rows up to `max_rows`,
    columns a multiple of the tile's C."""
    c = constants or CHUNK_SPLIT
    return Route("softmax_chunk_write" if twin else "softmax_chunk_stats", c, max_rows=max_rows,
                 cols_multiple=c["C"], sample=(2, 96 * c["C"] + 3 * 16 * c["C"] // 2))


ROUTES = [
    held(256, 1, c=16),
    # few rows (a block per multiprocessor or fewer): latency, so more warps of narrower tiles,
    # 8 values a lane up to 4096 columns (Triton's row kernel: 512 lanes at 4096, 3.3 us at
    # 32 x 4096 on the H200 where 4 warps of 16 x 64 took 4.5)
    held(1024, 4, c=16, max_rows=FEW_ROWS),
    held(2048, 8, c=16, max_rows=FEW_ROWS),
    held(4096, 8, c=32, max_rows=FEW_ROWS),
    held(8192, 16, c=32, max_rows=FEW_ROWS),
    held(1024, 1),
    held(2048, 2),
    held(4096, 4),
    held(8192, 8),
    held(16384, 16),
    chunk_split(CHUNK_ROWS),
    chunk_split(CHUNK_ROWS, twin=True),
    held(HELD_MAX_COLS, 16, tiles=2),
    chunk_split(SPLIT_MAX_ROWS),
    chunk_split(SPLIT_MAX_ROWS, twin=True),
    Route("softmax_stats", SPLIT, max_rows=SPLIT_MAX_ROWS, cols_multiple=TILE, sample=(2, 3200)),
    Route("softmax_write", SPLIT, max_rows=SPLIT_MAX_ROWS, cols_multiple=TILE, sample=(2, 3200)),
    Route("softmax_chunk_loop", CHUNK_LOOP, cols_multiple=CHUNK_LOOP["C"], sample=(3, 3200)),
    Route("softmax_loop", LOOP, cols_multiple=TILE, sample=(3, 3200)),
    Route("softmax_rows", {"COLS": 64, "WARPS": 4}, max_cols=4096, sample=(21, 300)),
    Route("softmax_partials", ROWS16_SPLIT, max_rows=512, sample=(3, 5000)),
    Route("softmax_normalize", ROWS16_SPLIT, max_rows=512, sample=(3, 5000)),
    Route("softmax_rows", {"COLS": 64, "WARPS": 4}, sample=(21, 300)),
]

TABLE = RoutingTable(ROUTES)

SPLIT_TWINS = {"softmax_stats": "softmax_write", "softmax_chunk_stats": "softmax_chunk_write",
               "softmax_partials": "softmax_normalize"}


def split_count(rows: int, cols: int, c: int, blocks: int) -> int:
    """Blocks per row of a split route: enough for `rows` x splits to reach `blocks` (a few per
    multiprocessor), at most one per 16 x c tile of the row and at most MAX_SPLITS (phase 2
    folds every partial of its row: it stays cheap)."""
    tiles = -(-(cols // TILE) // c)
    return max(1, min(-(-blocks // rows), tiles, MAX_SPLITS))


def chunk_split_count(rows: int, cols: int, c: int, warps: int, blocks: int) -> int:
    """Blocks per row of the chunk split: enough for `rows` x splits to reach `blocks`, at most
    one per group of `warps` tiles of 16 x c (a block's step) and at most MAX_SPLITS."""
    groups = -(-(-(-(cols // c) // TILE)) // warps)
    return max(1, min(-(-blocks // rows), groups, MAX_SPLITS))
