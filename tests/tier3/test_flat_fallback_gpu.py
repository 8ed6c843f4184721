"""The flat tiles' element-by-element path, out of line on sm_90a (flat_tile.hpp,
`read_piece_checked` / `write_piece_checked`), on the H200: ops whose routes hold more of the
row's view than it has (a last tile past the view's columns reads zeros and writes nothing)
against their references, in 16-bit dtypes (one 16-byte piece a unit) and fp32 (two)."""
import pytest

from ktile.tools.check_plan import find_op

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier3

# widths a multiple of 16 between two routes: 2880 takes 3072's route (view 180 of 192
# columns), 6400 7168's (400 of 448), 5008 5120's (313 of 320)
CASES = [("rms_norm", 1, 2880), ("rms_norm", 37, 6400), ("fused_add_rms_norm", 3, 2880),
         ("layer_norm", 5, 5008), ("softmax", 4, 2880)]


@pytest.mark.parametrize("dtype", ["bf16", "fp16", "fp32"])
@pytest.mark.parametrize("op_name,rows,cols", CASES)
def test_ragged_tiles_on_the_gpu(op_name, rows, cols, dtype):
    op = find_op(op_name)
    if dtype not in op.dtypes:
        pytest.skip(f"{op_name} takes no {dtype}")
    error, tolerance = op.case(rows, cols, dtype, "cuda")
    assert error <= tolerance, (op_name, rows, cols, dtype, error, tolerance)
