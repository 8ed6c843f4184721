"""Softmax's configuration space, by (rows, cols) of the 2-D view; the first route that fits wins.

- rows of up to 4096 columns: one block per 16 rows (`softmax_rows`), its warps sharing each row;
- wide rows, few of them (up to 512 rows): each row split across blocks of `BLOCK` columns
  (`softmax_partials` then `softmax_normalize`, at the same constants), so a handful of rows
  still fills the GPU;
- anything else: `softmax_rows` (many rows fill the GPU by themselves).

A split route is always a `softmax_partials` route followed by its `softmax_normalize` twin:
the op launches both at the first's constants. Tests force the split path at small widths by
routing through a table of their own (`TABLE` is read at each call)."""
from .._library import Route, RoutingTable

SPLIT = {"BLOCK": 4096, "COLS": 64, "WARPS": 4}

ROUTES = [
    Route("softmax_rows", {"COLS": 64, "WARPS": 4}, max_cols=4096, sample=(21, 300)),
    Route("softmax_partials", SPLIT, max_rows=512, sample=(3, 5000)),
    Route("softmax_normalize", SPLIT, max_rows=512, sample=(3, 5000)),
    Route("softmax_rows", {"COLS": 64, "WARPS": 4}, sample=(21, 300)),
]

TABLE = RoutingTable(ROUTES)
