"""`ktile check` (issue #14): exit statuses 0 / 1 / 2, the JSON object on the last line, an op
built for sm_90a (nvcc) and gfx1100 (clang-22) with --build-only and no GPU, a kernel given as
path/to/file.py:kernel_name (checked against its file's run_case, or by trace, gates and build
only where there is none), and kernels that fail: a mismatch, a register hoard the trace
refuses, a build the gate refuses. Run in process (`cli.main`), one small build per test,
shared through the build cache; the compiling tests are tier 1 and skip without the compiler."""
import dataclasses
import json
import textwrap

import pytest

from ktile import targets
from ktile.errors import KernelError
from ktile.runtime.build import toolchain_for
from ktile.tools import check_plan, cli

pytest.importorskip("torch")


def has_toolchain(target: str) -> bool:
    try:
        toolchain_for(targets.get(target)).identity
    except KernelError:
        return False
    return True


def marks(target: str) -> list:
    tool = "nvcc" if target == "sm_90a" else "LLVM 22 (clang++-22)"
    return [pytest.mark.tier1,
            pytest.mark.skipif(not has_toolchain(target), reason=f"tier 1: needs {tool}")]


def needs(target: str):
    """A test that builds for `target`: tier 1, skipped without its compiler."""
    def marked(test):
        for mark in marks(target):
            test = mark(test)
        return test
    return marked


def check(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def check_json(capsys, *argv) -> tuple[int, dict]:
    code, out, _ = check(capsys, *argv, "--json")
    return code, json.loads(out.strip().splitlines()[-1])


# a kernel and its reference in the examples' convention (KERNELS, CASES, run_case); SCALE is
# what run_case compares the kernel's a + a with: 2 matches, 3 does not
KERNEL_FILE = '''
import ktile as hk


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), 1))
def twice(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    idx = hk.tile_coord(0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = a[idx].load(hk.RT(hk.fp32, 16, 64))
    o[idx] = t + t


KERNELS = [(twice, {{}})]
CASES = [(16, 64), (21, 100)]
SCALE = {scale}


def run_case(shape, backend="interpret", target=None, device="cpu"):
    import torch
    a = torch.randn(shape, generator=torch.Generator().manual_seed(shape[0]))
    o = torch.zeros(shape)
    twice.interpret(a, o, target=target)
    return float((o - SCALE * a).abs().max()), 1e-6
'''

# one warp holding a 128x256 fp32 tile: 1024 registers per lane, refused at trace
HOARD_FILE = '''
import ktile as hk


@hk.kernel(grid=lambda p: (1, 1, 1))
def hoard(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    idx = hk.tile_coord(0, 0, 0, 0)
    t = a[idx].load(hk.RT(hk.fp32, 128, 256))
    o[idx] = t + t
'''


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """One folder for the kernel files of this module: a file written at the same path with
    the same kernel lines translates to the same C++ (its #line directives name the path), so
    the tests that rewrite kern.py share one build per target through the cache."""
    return tmp_path_factory.mktemp("check")


def kernel_file(folder, text: str, name: str = "kern.py") -> str:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return str(path)


# ---- exit 2: unusable input, named with its fix ------------------------------------------------

@pytest.mark.parametrize("argv,said", [
    (["rms_nrm", "--target", "gfx1100"], "did you mean rms_norm"),
    (["rms_norm", "--target", "gfx1101"], "gfx1100, gfx1201, gfx942, gfx950, sm_90a"),
    (["rms_norm", "--target", "sm_90a", "--emulate"], "--emulate runs AMD targets"),
    (["rms_norm", "--target", "gfx1100", "--shape", "4by1000"], "ROWSxCOLS"),
    (["missing.py:kernel", "--target", "gfx1100"], "no Python file"),
    (["rms_norm", "--target", "gfx1100", "--no-such-flag"], "unrecognized arguments"),
    (["rms_norm"], "--target"),
])
def test_unusable_input_exits_2_naming_the_fix(capsys, argv, said):
    code, out, err = check(capsys, *argv)
    assert code == 2 and out == ""
    assert said in err


def test_a_name_that_is_no_kernel_in_the_file_lists_the_files_kernels(capsys, folder):
    path = kernel_file(folder, KERNEL_FILE.format(scale=2))
    code, _, err = check(capsys, f"{path}:thrice", "--target", "gfx1100")
    assert code == 2 and "'thrice' is not defined" in err and f"{path}:twice" in err


# ---- which items an op gives ----------------------------------------------------------------

def test_an_op_gives_its_routes_for_the_target_in_one_dtype_or_all_with_sweep():
    op = check_plan.find_op("rms_norm")
    mine = [r for r in op.table.routes if r.targets is None or "sm_90a" in r.targets]
    default = check_plan.op_items(op, "sm_90a", sweep=False, shape=None)
    swept = check_plan.op_items(op, "sm_90a", sweep=True, shape=None)
    assert [i.constants for i in default] == [r.constants for r in mine]
    assert {i.dtype for i in default} == {op.dtypes[0]}
    assert len(swept) == len(mine) * len(op.dtypes)
    assert all(i.reference is not None for i in swept)
    at = check_plan.op_items(op, "sm_90a", sweep=False, shape=(4, 16384))
    assert [i.constants for i in at] == [op.table.choose(4, 16384, "sm_90a").constants]
    assert at[0].reference.what.endswith("4x16384")


# ---- an op, built with no GPU -------------------------------------------------------------------

@pytest.mark.parametrize("target", [pytest.param("sm_90a", marks=marks("sm_90a")),
                                    pytest.param("gfx1100", marks=marks("gfx1100"))])
def test_build_only_builds_an_op_through_the_gates_and_runs_nothing(capsys, target):
    code, report = check_json(capsys, "rms_norm", "--target", target, "--build-only",
                              "--shape", "4x1000")
    assert code == 0 and report["ok"] is True and report["target"] == target
    [result] = report["results"]
    assert (result["trace"], result["gates"], result["build"], result["status"]) == \
        ("ok", "ok", "ok", "ok")
    assert result["registers"] > 0 and result["spill_bytes"] == 0
    assert result["reference"] == {"note": "not run (--build-only)"}


@needs("gfx1100")
def test_an_op_is_checked_against_its_reference_on_the_interpreter(capsys):
    """An AMD target without --emulate: the interpreter, tracing for gfx1100 (the build of
    the build-only test, through the cache)."""
    code, out, err = check(capsys, "rms_norm", "--target", "gfx1100", "--shape", "4x1000")
    assert code == 0, out + err
    row = next(line for line in out.splitlines() if line.startswith("rms_norm/"))
    assert "(interpreter)" in row and row.rstrip().endswith("ok")
    assert "reference checks: 1 on the CPU interpreter (gfx1100)" in out
    assert "[1/1] rms_norm/" in err                       # progress on stderr


# ---- a kernel in a file ------------------------------------------------------------------------

@needs("gfx1100")
@pytest.mark.parametrize("scale,code,status", [(2, 0, "ok"), (3, 1, "mismatch")])
def test_a_file_kernel_is_checked_by_its_run_case(capsys, folder, scale, code, status):
    path = kernel_file(folder, KERNEL_FILE.format(scale=scale))
    got, report = check_json(capsys, f"{path}:twice", "--target", "gfx1100")
    [result] = report["results"]
    assert (got, result["status"], report["ok"]) == (code, status, code == 0)
    reference = result["reference"]
    assert reference["where"] == "interpreter" and reference["cases"] == 2
    assert (reference["max_error"] <= reference["tolerance"]) == (code == 0)


@needs("gfx1100")
def test_a_file_kernel_without_a_reference_says_it_is_built_only(capsys, folder):
    text = KERNEL_FILE.format(scale=2).split("KERNELS")[0]
    code, out, _ = check(capsys, f"{kernel_file(folder, text)}:twice", "--target", "gfx1100")
    assert code == 0
    assert "reference: no reference: the file defines no run_case and CASES, so the kernel " \
           "is checked by trace, gates and build only" in out


@needs("gfx1100")
def test_a_kernel_the_trace_refuses_fails_with_exit_1(capsys, folder):
    code, out, _ = check(capsys, f"{kernel_file(folder, HOARD_FILE, 'hoard.py')}:hoard", "--target",
                         "gfx1100")
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("hoard.py:hoard"))
    assert row.split()[2:5] == ["failed", "-", "-"] and row.endswith("trace failed")
    assert "1024 registers" in out and "fix:" in out


@needs("sm_90a")
def test_a_build_the_gate_refuses_fails_with_exit_1(capsys, monkeypatch, folder):
    """The real resource gate, shown a report with spills (a planted spill: the register
    estimate keeps real kernels well under what nvcc spills at)."""
    from ktile.runtime import build, gates

    def spilling(report, loc=None):
        return gates.resource_gate(dataclasses.replace(report, spill_stores=64), loc)
    monkeypatch.setattr(build, "resource_gate", spilling)
    path = kernel_file(folder, KERNEL_FILE.format(scale=2))
    code, report = check_json(capsys, f"{path}:twice", "--target", "sm_90a")
    [result] = report["results"]
    assert code == 1 and report["ok"] is False
    assert (result["build"], result["gates"], result["status"]) == ("ok", "refused",
                                                                     "gate refused")
    assert "spills registers" in result["detail"][0]
