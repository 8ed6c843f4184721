"""`hk.pipeline` (issue #11): warpgroup roles over a pipeline of shared stages.

What sm_90a's trace holds (roles, setmaxnreg, the stages' waits and releases, TMA stage
copies) and translates to (kt::pipeline, one block a multiprocessor), what every other target
traces instead (copies, waits, barriers: no pipeline op), the interpreter's results at ragged
shapes on both forms, the budgets pass with roles, and each misuse refused at the author's
line with its fix."""
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import ktile as hk
from ktile.errors import KernelError
from ktile.ir import ops as kt
from ktile.ir import ops_pipeline as kp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pipeline_kernels as P  # noqa: E402

torch = pytest.importorskip("torch")

GRID = dict(grid=lambda p: (1, 1, 1))
DT = hk.bf16


def ops_of(trace, cls) -> list:
    return [op for op in trace.module.walk() if isinstance(op, cls)]


# ---- sm_90a: warp-specialised ------------------------------------------------------------------

def test_sm90a_traces_roles_registers_and_the_stage_protocol():
    trace = P.pipelined.trace("sm_90a")
    roles = ops_of(trace, kp.RoleOp)
    assert [(r.role.data, r.prop_int("first_warp"), r.prop_int("warps")) for r in roles] == \
        [("producer", 4, 4)]                         # consumers are warps 0..3
    assert [(op.action.data, op.prop_int("registers")) for op in ops_of(trace, kp.SetMaxNRegOp)] \
        == [("dec", 56), ("inc", 200)]
    assert [op.barrier.data for op in ops_of(trace, kp.StageWaitOp)] == ["empty", "full"]
    copies = ops_of(trace, kp.StageCopyOp)
    assert len(copies) == 2 and all(c.prop_int("map") is not None for c in copies)
    (release,) = ops_of(trace, kp.StageReleaseOp)
    assert release.prop_int("keep") == 1             # step k's group stays in flight
    (init,) = ops_of(trace, kp.PipelineInitOp)
    assert (init.prop_int("stages"), init.prop_int("copies"), init.prop_int("readers")) == (3, 2, 4)
    assert init.prop_int("offset") % 8 == 0 and not ops_of(trace, kt.BarrierOp)
    assert not trace.warnings


def test_sm90a_translation_launches_one_block_per_multiprocessor():
    source = P.pipelined.trace("sm_90a").source()
    assert "__launch_bounds__(256, 1)" in source
    for text in ("kt::pipeline<3, ", "kt::setmaxnreg_dec<56>();", "kt::setmaxnreg_inc<200>();",
                 ".wait_empty(", ".wait_full(", ".template release<1>(", "kt::stage_copy(",
                 "kt::mma_ABt_shared<4, false>("):     # TMA-written stages: no proxy fence
        assert text in source, text
    assert "kt::barrier();" not in source


def test_without_tensor_maps_the_producer_copies_by_cp_async():
    """A GPU call whose tensors cannot have tensor maps: the same roles, the stage copies
    cp.async by the producer's threads, each arriving on full (4 warps × 32 × 2 tiles)."""
    trace = P.pipelined.trace_copies("sm_90a", False, {})
    (init,) = ops_of(trace, kp.PipelineInitOp)
    assert init.prop_int("tma") == 0
    assert all(c.prop_int("map") is None for c in ops_of(trace, kp.StageCopyOp))
    source = trace.source()
    assert "kt_pipe0(256, 4);" in source and "kt_map" not in source
    assert "kt::mma_ABt_shared<4>(" in source      # cp.async-written stages: the proxy fence
    assert "kt::setmaxnreg_dec<56>();" in source


def test_the_matmul_kernel_fits_its_raised_registers_without_an_occupancy_warning():
    from ktile.ops.matmul import tiles_ws
    trace = tiles_ws.wgmma_ws_nt("bf16").trace("sm_90a")
    assert not trace.warnings                      # one block of 12 warps per SM is the design
    assert 128 < trace.module.ops.last.attributes["kt.vgpr_estimate"].value.data <= 240 * 3 // 4
    assert "__launch_bounds__(384, 1)" in trace.source()


@pytest.mark.parametrize("target,bn", [("sm_90a", 128), ("sm_90a", 256), ("gfx950", 128)])
def test_the_persistent_matmul_covers_every_tile_once_in_grouped_order(target, bn):
    """3 blocks over 3 × 3 (or, 256 columns wide, 3 × 2) ragged output tiles (grouped 2 row
    tiles a band): each block's pipeline runs over its tiles' K steps, storing each tile at
    its last step."""
    from ktile.ops.matmul import tiles_ws
    kernel = tiles_ws.wgmma_ws_persistent_nt("bf16")
    g = torch.Generator().manual_seed(5)
    a, w = (torch.randn(s, generator=g).bfloat16() for s in ((300, 100), (300, 100)))
    bias = torch.randn(300, generator=g).bfloat16()
    out = torch.zeros(300, 300).bfloat16()
    kernel.interpret(a, w, bias, out, target=target, BN=bn, STAGES=3, SMS=3, GROUP_M=2)
    want = a.float().numpy() @ w.float().numpy().T + bias.float().numpy()
    assert np.abs(out.float().numpy() - want).max() <= 2 ** -7 * np.abs(want).max()


def test_grouped_raster_order_visits_each_tile_once():
    from ktile.ops.matmul.tiles_ws import grouped_tile
    order = [grouped_tile(t, 5, 3, 2) for t in range(15)]   # on Python ints, as traced
    assert sorted(order) == [(m, n) for m in range(5) for n in range(3)]
    assert order[:4] == [(0, 0), (1, 0), (0, 1), (1, 1)]      # a band of 2 rows, column by column
    assert order[-3:] == [(4, 0), (4, 1), (4, 2)]              # the last band has one row


# ---- every other target: in turns ----------------------------------------------------------------

@pytest.mark.parametrize("target,warps", [("gfx950", 8), ("gfx1100", 4)])
def test_other_targets_trace_copies_waits_and_barriers(target, warps):
    trace = P.pipelined.trace(target, WARPS=warps)
    assert not any(ops_of(trace, cls) for cls in (kp.PipelineInitOp, kp.SetMaxNRegOp,
                                                  kp.StageWaitOp, kp.StageCopyOp))
    assert ops_of(trace, kt.CopyAsyncOp) and ops_of(trace, kt.BarrierOp)
    assert bool(ops_of(trace, kp.RoleOp)) == (warps == 8)   # consumers alone need no branch


@pytest.mark.parametrize("target,warps", [("sm_90a", 8), ("gfx1100", 8), ("gfx950", 4)])
@pytest.mark.parametrize("m,n,k", [(70, 45, 100), (64, 32, 32), (1, 3, 200)], ids=str)
def test_interpreter_matches_the_reference_at_ragged_shapes(target, warps, m, n, k):
    a, b, c = P.operands(m, n, k)
    P.pipelined.interpret(a, b, c, target=target, WARPS=warps)
    want = P.reference(a, b)
    assert np.abs(c.numpy() - want).max() <= 1e-5 * max(1.0, np.abs(want).max())


@pytest.mark.parametrize("stages", [2, 4])
def test_stage_counts_around_the_step_count(stages):
    """7 steps over 2 stages (each stage refilled three times) and over 4 (round 1 partial)."""
    a, b, c = P.operands(20, 20, 200)
    P.pipelined.interpret(a, b, c, target="sm_90a", STAGES=stages)
    want = P.reference(a, b)
    assert np.abs(c.numpy() - want).max() <= 1e-5 * np.abs(want).max()


# ---- misuse, refused at the author's line ------------------------------------------------------

def line_of(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if marker in line)


def refused(fn, marker: str, *words, warps=8, target="sm_90a"):
    with pytest.raises(KernelError) as info:
        hk.kernel(warps=warps, **GRID)(fn).trace(target)
    text = str(info.value)
    for word in words:
        assert word in text, f"{word!r} not in:\n{text}"
    assert info.value.loc is not None and info.value.loc.line == line_of(fn, marker), text


def _pipe(a):
    return hk.pipeline(2, hk.ST(DT, 64, 32), hk.ST(DT, 32, 32), steps=hk.cdiv(a.cols, 32))


def consumer_writes_a_stage(a: hk.Tensor[DT], b: hk.Tensor[DT], c: hk.Tensor[hk.fp32]):
    pipe = _pipe(a)

    @pipe.producer(warpgroups=1)
    def load(k, sa, sb):
        hk.group.load(sa, a[hk.tile_coord(0, 0, 0, k)])
        hk.group.load(sb, b[hk.tile_coord(0, 0, 0, k)])

    @pipe.consumer(warpgroups=1)
    def use(k, sa, sb, acc):
        sb.store(hk.zeros(hk.RT(DT, 32, 32)))      # mark
        return acc
    pipe.run(hk.zeros(hk.RT(hk.fp32, 16, 32)))


def producer_issues_an_mma(a: hk.Tensor[DT], b: hk.Tensor[DT], c: hk.Tensor[hk.fp32]):
    pipe = _pipe(a)

    @pipe.producer(warpgroups=1)
    def load(k, sa, sb):
        hk.group.load(sa, a[hk.tile_coord(0, 0, 0, k)])
        hk.group.load(sb, b[hk.tile_coord(0, 0, 0, k)])
        x = hk.zeros(hk.RT(hk.fp32, 16, 32))
        x += sa @ sb.T                              # mark

    @pipe.consumer(warpgroups=1)
    def use(k, sa, sb):
        pass
    pipe.run()


def stage_read_outside(a: hk.Tensor[DT], b: hk.Tensor[DT], c: hk.Tensor[hk.fp32]):
    pipe = _pipe(a)
    kept = []

    @pipe.producer(warpgroups=1)
    def load(k, sa, sb):
        hk.group.load(sa, a[hk.tile_coord(0, 0, 0, k)])
        hk.group.load(sb, b[hk.tile_coord(0, 0, 0, k)])

    @pipe.consumer(warpgroups=1)
    def use(k, sa, sb, acc):
        kept.append(sb)
        return acc
    pipe.run(hk.zeros(hk.RT(hk.fp32, 16, 32)))
    acc = hk.zeros(hk.RT(hk.fp32, 16, 32))
    acc += hk.zeros(hk.RT(DT, 16, 32)) @ kept[0].T   # mark


def barrier_in_a_role(a: hk.Tensor[DT], b: hk.Tensor[DT], c: hk.Tensor[hk.fp32]):
    pipe = _pipe(a)

    @pipe.producer(warpgroups=1)
    def load(k, sa, sb):
        hk.group.load(sa, a[hk.tile_coord(0, 0, 0, k)])
        hk.barrier()                                 # mark
        hk.group.load(sb, b[hk.tile_coord(0, 0, 0, k)])

    @pipe.consumer(warpgroups=1)
    def use(k, sa, sb):
        pass
    pipe.run()


def consumer_loads(a: hk.Tensor[DT], b: hk.Tensor[DT], c: hk.Tensor[hk.fp32]):
    pipe = _pipe(a)
    mine = hk.shared(hk.ST(DT, 64, 32))

    @pipe.producer(warpgroups=1)
    def load(k, sa, sb):
        hk.group.load(sa, a[hk.tile_coord(0, 0, 0, k)])
        hk.group.load(sb, b[hk.tile_coord(0, 0, 0, k)])

    @pipe.consumer(warpgroups=1)
    def use(k, sa, sb):
        hk.group.load(mine, a[hk.tile_coord(0, 0, 0, k)])   # mark
    pipe.run()


def half_filled(a: hk.Tensor[DT], b: hk.Tensor[DT], c: hk.Tensor[hk.fp32]):
    pipe = _pipe(a)

    @pipe.producer(warpgroups=1)
    def load(k, sa, sb):
        hk.group.load(sa, a[hk.tile_coord(0, 0, 0, k)])

    @pipe.consumer(warpgroups=1)
    def use(k, sa, sb):
        pass
    pipe.run()                                         # mark


def _roles(warpgroups=1, registers=None, stages=2):
    def kernel(a: hk.Tensor[DT], b: hk.Tensor[DT], c: hk.Tensor[hk.fp32]):
        pipe = hk.pipeline(stages, hk.ST(DT, 64, 32), steps=4)   # mark stages

        @pipe.producer(warpgroups=1, registers=registers)        # mark registers
        def load(k, sa):
            hk.group.load(sa, a[hk.tile_coord(0, 0, 0, k)])

        @pipe.consumer(warpgroups=warpgroups)
        def use(k, sa):
            pass
        pipe.run()                                               # mark run
    return kernel


CASES = {
    "consumer_writes_a_stage": (consumer_writes_a_stage, "# mark", "a consumer writes a "
                                "pipeline stage", "fix:"),
    "producer_issues_an_mma": (producer_issues_an_mma, "# mark", "the producer issues an MMA",
                               "@pipe.consumer"),
    "stage_read_outside": (stage_read_outside, "# mark", "read outside the pipeline"),
    "barrier_in_a_role": (barrier_in_a_role, "# mark", "a barrier inside the pipeline's "
                          "producer"),
    "consumer_loads": (consumer_loads, "# mark", "a group load in the pipeline's consumer"),
    "half_filled": (half_filled, "# mark", "fills the stage's tiles [1, 0] times"),
}


@pytest.mark.parametrize("case", CASES)
def test_misuse_is_refused_at_its_line(case):
    fn, marker, *words = CASES[case]
    refused(fn, marker, *words)


def test_warp_counts_that_do_not_add_up_are_refused():
    fn = _roles(warpgroups=2)
    refused(fn, "# mark run", "1 producer and 2 consumer warpgroups, 12 warps", "has 8",
            "warps=12")
    # elsewhere the consumers' warps alone are a block too; 8 + 4 is neither
    refused(_roles(warpgroups=2), "# mark run", "or the consumers' 8 alone", warps=4,
            target="gfx950")


@pytest.mark.parametrize("registers", [100, 20, 264, 40.0])
def test_setmaxnreg_values_outside_its_range_are_refused(registers):
    refused(_roles(registers=registers), "# mark registers", "multiple of 8 from 24 to 256")


def test_roles_over_the_register_pool_are_refused():
    """384 threads launch with 168 registers each: 128 × 40 + 256 × 240 is over that pool."""
    def kernel(a: hk.Tensor[DT], b: hk.Tensor[DT], c: hk.Tensor[hk.fp32]):
        pipe = hk.pipeline(2, hk.ST(DT, 64, 32), steps=4)

        @pipe.producer(warpgroups=1, registers=40)
        def load(k, sa):
            hk.group.load(sa, a[hk.tile_coord(0, 0, 0, k)])

        @pipe.consumer(warpgroups=2, registers=240)
        def use(k, sa):
            pass
        pipe.run()                                               # mark
    refused(kernel, "# mark", "66560 registers", "over the 64512 the block is launched with "
            "(384 threads × 168", "at most 64512", warps=12)


def test_one_stage_is_refused():
    refused(_roles(stages=1), "# mark stages", "at least 2 stages")


def test_the_verify_pass_refuses_a_barrier_in_a_role_branch_of_the_ir():
    """IR written by hand (ktile-opt) gets the same rule as traced code: a role's branch is
    some warps only, so no block-wide op inside it (its warpgroup MMAs are allowed)."""
    from ktile.passes.verify import Verify
    module = P.pipelined.trace("sm_90a").module.clone()
    (role,) = [op for op in module.walk() if isinstance(op, kp.RoleOp)]
    branch = next(iter(role.result.uses)).operation
    first = branch.true_region.block.first_op
    branch.true_region.block.insert_op_before(kt.BarrierOp(), first)
    with pytest.raises(KernelError) as info:
        Verify().apply(None, module)
    assert "barrier" in str(info.value) and "depends" in str(info.value)
    Verify().apply(None, P.pipelined.trace("sm_90a").module.clone())   # as traced: accepted


@pytest.mark.parametrize("target", ["sm_90a", "gfx950"])
def test_the_pipeline_ir_prints_and_parses_back(target):
    from ktile.ir.printing import module_text, parse_module
    trace = P.pipelined.trace(target)
    for generic in (False, True):
        text = module_text(trace.module, generic=generic, locations=False)
        assert module_text(parse_module(text), generic=generic, locations=False) == text
    parse_module(trace.dump(generic=True, locations=True), verify=True)


def test_num_warps_inside_a_role_is_the_roles():
    seen = {}

    def kernel(a: hk.Tensor[DT], b: hk.Tensor[DT], c: hk.Tensor[hk.fp32]):
        pipe = hk.pipeline(2, hk.ST(DT, 64, 32), steps=4)

        @pipe.producer(warpgroups=1)
        def load(k, sa):
            seen["producer"] = hk.arch.num_warps
            hk.group.load(sa, a[hk.tile_coord(0, 0, 0, k)])

        @pipe.consumer(warpgroups=2)
        def use(k, sa):
            seen["consumer"] = hk.arch.num_warps
        seen["block"] = hk.arch.num_warps
        pipe.run()
    hk.kernel(warps=12, **GRID)(kernel).trace("sm_90a")
    assert seen == {"block": 12, "producer": 4, "consumer": 8}
