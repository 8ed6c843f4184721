"""The control-flow rewrite: Python values unroll or pick a branch at trace time; device
values become scf.for / scf.if / scf.while carrying what the body changes."""
import ktile as hk
from ktile.ir.query import kernel_func

GRID = dict(grid=lambda p: (1,))
T = hk.RT(hk.fp32, 16, 16)


def op_names(kernel, **constants):
    return [op.name for op in kernel_func(kernel.trace(**constants).module).walk()]


def test_python_range_unrolls():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        acc = hk.zeros(T)
        for i in range(3):
            acc = acc + 1.0
        a[0, 0, 0, 0] = acc
    names = op_names(k)
    assert "scf.for" not in names and names.count("kt.binary") == 3


def test_device_range_becomes_scf_for_carrying_the_tile():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        acc = hk.zeros(T)
        for i in range(a.cols // 16):
            acc += a[0, 0, 0, i].load(T)
        a[0, 0, 0, 0] = acc
    fn = kernel_func(k.trace().module)
    loops = [op for op in fn.walk() if op.name == "scf.for"]
    assert len(loops) == 1 and len(loops[0].results) == 1
    assert str(loops[0].results[0].type) == "!kt.rt<16x16xf32, row>"


def test_hk_range_forces_a_runtime_loop():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        acc = hk.zeros(T)
        for i in hk.range(4):
            acc = acc + 1.0
        a[0, 0, 0, 0] = acc
    assert op_names(k).count("scf.for") == 1


def test_python_if_picks_a_branch_at_trace_time():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32], *, FLAG: hk.Constexpr[bool] = True):
        x = hk.zeros(T)
        if FLAG:
            x = hk.exp(x)
        else:
            x = hk.log(x)
        a[0, 0, 0, 0] = x
    fn = kernel_func(k.trace().module)
    fns = [op.properties["fn"].data for op in fn.walk() if op.name == "kt.unary"]
    assert fns == ["exp"] and "scf.if" not in op_names(k)
    fn = kernel_func(k.trace(FLAG=False).module)
    assert [op.properties["fn"].data for op in fn.walk() if op.name == "kt.unary"] == ["log"]


def test_device_if_yields_what_either_branch_changes():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        x = hk.zeros(T)
        n = 0
        if a.rows > 16:
            x = x + 1.0
            n = n + 1
        a[0, 0, 0, 0] = x + hk.to_float(n)
    fn = kernel_func(k.trace().module)
    ifs = [op for op in fn.walk() if op.name == "scf.if"]
    assert len(ifs) == 1
    assert [str(r.type) for r in ifs[0].results] == ["!kt.rt<16x16xf32, row>", "index"]


def test_while_carries_a_python_counter_as_a_scalar():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        steps = 0
        x = a[0, 0, 0, 0].load(T)
        while (hk.sum(hk.row_max(x)) > 1.0) & (steps < 10):
            x = x * 0.5
            steps += 1
        a[0, 0, 0, 0] = x + hk.to_float(steps)
    fn = kernel_func(k.trace().module)
    whiles = [op for op in fn.walk() if op.name == "scf.while"]
    assert len(whiles) == 1
    assert sorted(str(r.type) for r in whiles[0].results) == ["!kt.rt<16x16xf32, row>", "index"]


def test_nested_loops_and_branches():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        acc = hk.zeros(T)
        for i in range(a.rows // 16):
            for j in range(a.cols // 16):
                t = a[0, 0, i, j].load(T)
                if hk.sum(hk.row_sum(t)) > 0.0:
                    acc += t
        a[0, 0, 0, 0] = acc
    names = op_names(k)
    assert names.count("scf.for") == 2 and names.count("scf.if") == 1


def test_python_loop_with_break_stays_python():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        acc = hk.zeros(T)
        for i in range(10):
            if i == 2:
                break
            acc = acc + 1.0
        a[0, 0, 0, 0] = acc
    assert op_names(k).count("kt.binary") == 2


def test_func_helpers_are_inlined_with_their_control_flow():
    @hk.func
    def total(a, n):
        acc = hk.zeros(T)
        for i in range(n):
            acc += a[0, 0, 0, i].load(T)
        return acc

    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        a[0, 0, 0, 0] = total(a, a.cols // 16)
    assert op_names(k).count("scf.for") == 1


def test_every_op_records_its_kernel_line():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32]):
        x = a[0, 0, 0, 0].load(T)
        a[0, 0, 0, 0] = hk.exp(x)
    first = k.fn.__code__.co_firstlineno
    fn = kernel_func(k.trace().module)
    lines = {op.name: op.location.line.data for op in fn.body.block.ops if op.name.startswith("kt.")}
    assert lines["kt.load"] == first + 2 and lines["kt.unary"] == first + 3
    assert lines["kt.store"] == first + 3


def test_trace_is_cached_by_constants_and_target():
    @hk.kernel(**GRID)
    def k(a: hk.Tensor[hk.fp32], *, N: hk.Constexpr[int] = 16):
        a[0, 0, 0, 0] = hk.zeros(hk.RT(hk.fp32, N, 16))
    assert k.trace() is k.trace()
    assert k.trace(N=32) is not k.trace()
    assert k.trace(target="sm_90a") is not k.trace()
